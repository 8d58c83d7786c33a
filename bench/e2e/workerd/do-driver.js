// Bench fixture (plain JS, like ../passthrough-worker.js): a Worker that
// hosts the real RouterDO class and drives it over RPC from inside workerd,
// for the decisions-per-second figure without HTTP, backends or streaming.
// GET /drive?clients=C&decisions=N[&fresh=1][&cells=K][&cell=J] → JSON timing. fresh=1 takes
// a new stub for every decision, as the gateway must (a stub cannot outlive the
// request that made it), to show what opening one costs. cells=K drives K RouterDO
// objects at once, each a cell of 16 backends of its own (caller i drives cell
// i mod K), named as the gateway names a pool's cells; K = 1 is the one object.
// cell=J (0 ≤ J < K) drives only cell J of the K with every caller: one workerd
// process per cell, as production runs distinct objects apart (cells-do-run.ts).
// Served by workerd or wrangler dev from a generated config (cost-do.ts,
// cells-do-run.ts); never deployed.
// object=null drives NullRouterDO instead (../null-do-worker.js: answers at once, routes nothing), so
// (RouterDO − NullRouterDO) is the CPU our decision costs apart from the RPCs. carry=1 ends each
// caller's previous lease on its next route call (RouteInput.completes, as the gateway does under
// traffic) instead of a complete() call of its own: one RPC per decision instead of two. first=1 also
// tells each lease's first token (RouterDO.firstToken) on a stub of its own between route and end, as the
// Worker does for a streamed answer (router-client.ts noticeFirstToken): one RPC more per decision.
export { RouterDO } from "../../../durable-objects/router-do";
export { NullRouterDO } from "../null-do-worker.js";

const BACKENDS = 16;
const specOf = (cell, k) => ({
  backends: Array.from({ length: BACKENDS }, (_, i) => ({
    id: k === 1 ? `b${i}` : `c${cell}-b${i}`,
    url: `http://127.0.0.1:9/${i}`,
    weight: 1,
    kvCacheTokens: 442368,
  })),
  policy: "prefix_aware",
  blockTokens: 16,
  balanceFactor: 1.25,
  leaseTtlSeconds: 300,
  healthProbeSeconds: 10,
  ejectAfterFaults: 3,
  restoreAfterChecks: 2,
  maxEjectionPercent: 50,
  retryBudgetPercent: 20,
  abPolicy: null,
  abPercent: 50,
  shadow: false,
  // wrangler.toml's default (off). The object needs every PoolSpec field: without this one its
  // alarm time is NaN and every route throws (setAlarm: "not a valid Date").
  engineScrapeMs: 0,
});
const nameOf = (cell, k) => (k === 1 ? "bench-pool" : `bench-pool cell ${cell + 1}/${k}`);
const versionOf = (cell, k) => (k === 1 ? "bench-v1" : `bench-v1-${cell}-${k}`);

function blocks(group, q) {
  const out = new Array(512);
  for (let b = 0; b < 512; b++) out[b] = b < 480 ? group * 1000003 + b : (group * 7919 + q) * 1009 + b;
  return out;
}

const OUTCOME = { ok: true, status: 200, promptTokens: 8192, cachedTokens: 7680, ttftMs: 40 };
const sent = new Set();
/** One decision; with `carry` (an array: the caller's lease still open, if any) its end rides on the next route call. */
async function decide(stub, n, cell, k, carry, firstStub) {
  const version = versionOf(cell, k);
  const previous = carry?.pop();
  const r = await stub.route({
    fleetVersion: version,
    ...(sent.has(version) ? {} : { spec: specOf(cell, k) }),
    blocks: blocks(n % 256, n),
    promptTokens: 8192,
    outputTokens: 256,
    ...(previous !== undefined ? { completes: [{ leaseId: previous, outcome: OUTCOME }] } : {}),
  });
  if (!r.ok) throw new Error(`route: ${r.code} ${r.message}`);
  sent.add(version);
  if (firstStub !== undefined) {
    const f = await firstStub().firstToken(r.leaseId);
    if (!f.ok) throw new Error("firstToken: not ok");
  }
  if (carry !== undefined) {
    carry.push(r.leaseId);
    return;
  }
  const c = await stub.complete(r.leaseId, OUTCOME);
  if (!c.ok) throw new Error(`complete: ${c.code}`);
}

let next = 0;
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const clients = Number(url.searchParams.get("clients") ?? 1);
    const decisions = Number(url.searchParams.get("decisions") ?? 1000);
    const fresh = url.searchParams.get("fresh") === "1";
    const k = Number(url.searchParams.get("cells") ?? 1);
    const only = url.searchParams.get("cell");
    const onlyCell = only === null ? undefined : Number(only);
    if (!Number.isInteger(k) || k < 1) return new Response(`cells=${k}: a positive integer`, { status: 400 });
    if (onlyCell !== undefined && !(Number.isInteger(onlyCell) && onlyCell >= 0 && onlyCell < k))
      return new Response(`cell=${only}: an integer in [0, ${k})`, { status: 400 });
    const ns = url.searchParams.get("object") === "null" ? env.NULL_ROUTER : env.ROUTER;
    const carry = url.searchParams.get("carry") === "1";
    const first = url.searchParams.get("first") === "1";
    const shared = Array.from({ length: k }, (_, j) => ns.getByName(nameOf(j, k)));
    const stubFor = (cell) => (fresh ? ns.getByName(nameOf(cell, k)) : shared[cell]);
    const perClient = Math.ceil(decisions / clients);
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: clients }, async (_, i) => {
        const cell = onlyCell ?? i % k;
        const open = carry ? [] : undefined;
        const firstStub = first ? () => stubFor(cell) : undefined;
        for (let d = 0; d < perClient; d++) await decide(stubFor(cell), next++, cell, k, open, firstStub);
        // The last lease's end, sent alone as an isolate's flush would.
        if (open?.length)
          await stubFor(cell).completeAll(open.map((leaseId) => ({ leaseId, outcome: OUTCOME })));
      }),
    );
    const ms = performance.now() - t0;
    return Response.json({
      backends: BACKENDS,
      cells: k,
      clients,
      fresh,
      carry,
      first,
      object: ns === env.ROUTER ? "router" : "null",
      decisions: perClient * clients,
      ms,
    });
  },
};
