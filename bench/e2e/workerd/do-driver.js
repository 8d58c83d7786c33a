// Bench fixture (plain JS, like ../passthrough-worker.js): a Worker that
// hosts the real RouterDO class and drives it over RPC from inside workerd,
// for the decisions-per-second figure without HTTP, backends or streaming.
// GET /drive?clients=C&decisions=N[&fresh=1] → JSON timing. fresh=1 takes a new
// stub for every decision, as the gateway must (a stub cannot outlive the
// request that made it), to show what opening one costs. Served by workerd or wrangler dev from
// a generated config (cost-do.ts); never deployed.
export { RouterDO } from "../../../durable-objects/router-do";

const BACKENDS = 16;
const spec = {
  backends: Array.from({ length: BACKENDS }, (_, i) => ({
    id: `b${i}`,
    url: `http://127.0.0.1:9/${i}`,
    weight: 1,
    kvCacheTokens: 442368,
  })),
  policy: "prefix_aware",
  blockTokens: 16,
  balanceFactor: 1.25,
  leaseTtlSeconds: 300,
  healthProbeSeconds: 10,
};

function blocks(group, q) {
  const out = new Array(512);
  for (let b = 0; b < 512; b++) out[b] = b < 480 ? group * 1000003 + b : (group * 7919 + q) * 1009 + b;
  return out;
}

let sent = false;
async function decide(stub, n) {
  const r = await stub.route({
    fleetVersion: "bench-v1",
    ...(sent ? {} : { spec }),
    blocks: blocks(n % 256, n),
    promptTokens: 8192,
    outputTokens: 256,
  });
  if (!r.ok) throw new Error(`route: ${r.code} ${r.message}`);
  sent = true;
  const c = await stub.complete(r.leaseId, {
    ok: true,
    status: 200,
    promptTokens: 8192,
    cachedTokens: 7680,
    ttftMs: 40,
  });
  if (!c.ok) throw new Error(`complete: ${c.code}`);
}

let next = 0;
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const clients = Number(url.searchParams.get("clients") ?? 1);
    const decisions = Number(url.searchParams.get("decisions") ?? 1000);
    const fresh = url.searchParams.get("fresh") === "1";
    const shared = env.ROUTER.getByName("bench-pool");
    const stubFor = () => (fresh ? env.ROUTER.getByName("bench-pool") : shared);
    const perClient = Math.ceil(decisions / clients);
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: clients }, async () => {
        for (let k = 0; k < perClient; k++) await decide(stubFor(), next++);
      }),
    );
    const ms = performance.now() - t0;
    return Response.json({ backends: BACKENDS, clients, fresh, decisions: perClient * clients, ms });
  },
};
