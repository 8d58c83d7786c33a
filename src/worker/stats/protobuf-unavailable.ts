/**
 * Stands in for `protobufjs/minimal` in the Worker bundle (wrangler.toml
 * [alias]). @datadog/sketches-js requires it lazily, only to serialise a
 * sketch as protobuf, which the gateway never does (quantile-sketch.ts
 * moves sketches as plain data). Any use throws rather than pulling ~70 KB
 * of protobuf runtime into the bundle.
 */
function unavailable(): never {
  throw new Error("protobuf serialisation of sketches is not bundled; use QuantileSketch.toData()");
}

export const Reader = { create: unavailable };
export const Writer = { create: unavailable };
export const util = { Long: undefined, global: globalThis };
export const roots: Record<string, unknown> = {};
export default { Reader, Writer, util, roots };
