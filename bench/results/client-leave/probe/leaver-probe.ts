// One streamed leaver against the real gateway bundle in workerd: when does the backend see its request closed,
// and when does its lease end, for a client that closes with FIN (socket.destroy) or RST (resetAndDestroy)?
import http from "node:http";
import { segmentText } from "../../../../sim/workloads/segment-text";
import { bundleWorker } from "../../../e2e/gateway";
import { GATEWAY_KEY, MODEL, startRig } from "../../../faults/rig";

const how = (process.argv[2] ?? "fin") as "fin" | "rst";
const stream = (process.argv[3] ?? "stream") === "stream";
const bundle = await bundleWorker();
const rig = await startRig({ emulators: 4, configPath: bundle.configPath });
const cancelled = () => rig.emulators.reduce((n, e) => n + e.state().stats.cancelled, 0);
const leases = async () => (await rig.poolStats())?.leases ?? null;
try {
  // Warm the pool (its first route call learns the fleet).
  await fetch(`${rig.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${GATEWAY_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, max_tokens: 2, messages: [{ role: "user", content: "warm" }] }),
  }).then((r) => r.text());
  const before = cancelled();
  const body = JSON.stringify({
    model: MODEL,
    stream,
    max_tokens: stream ? 64 : 256,
    messages: [{ role: "user", content: segmentText({ key: `probe/${how}/${Date.now()}`, tokens: 8192 }) }],
  });
  const u = new URL(rig.url);
  const t0 = Date.now();
  let headersAt: number | undefined;
  const req = http.request(
    { host: u.hostname, port: u.port, path: "/v1/chat/completions", method: "POST",
      headers: { authorization: `Bearer ${GATEWAY_KEY}`, "content-type": "application/json", "x-request-id": `probe-${how}` } },
    (res) => { headersAt = Date.now() - t0; res.resume(); },
  );
  req.on("error", () => {});
  req.end(body);
  await new Promise((r) => setTimeout(r, 50));
  if (how === "rst") req.socket?.resetAndDestroy();
  else req.destroy();
  const left = Date.now() - t0;
  let cancelAt: number | undefined;
  let leaseZeroAt: number | undefined;
  let l: number | null = null;
  for (let i = 0; i < 100 && (cancelAt === undefined || leaseZeroAt === undefined); i++) {
    await new Promise((r) => setTimeout(r, 100));
    if (cancelAt === undefined && cancelled() > before) cancelAt = Date.now() - t0;
    l = await leases();
    if (leaseZeroAt === undefined && l === 0) leaseZeroAt = Date.now() - t0;
  }
  const ttft = rig.emulators.map((e) => e.serverTtftMs(`probe-${how}`)).find((x) => x !== undefined);
  console.log(JSON.stringify({ how, stream, left, headersAt, backendCancelledAt: cancelAt, backendFirstTokenMs: ttft ?? null, leaseZeroAt, leasesNow: l }));
} finally {
  await rig.close();
  await bundle.dispose();
}
