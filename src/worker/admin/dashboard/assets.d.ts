// The dashboard's browser files are bundled as text (wrangler.toml [[rules]]; HTML is text by default).
declare module "*.html" {
  const text: string;
  export default text;
}
declare module "*/dashboard/app.js" {
  const text: string;
  export default text;
}
declare module "*.css" {
  const text: string;
  export default text;
}
declare module "uplot/dist/uPlot.iife.min.js" {
  const text: string;
  export default text;
}
