export default { fetch: () => new Response("ok") };
export class RouterDO {}
