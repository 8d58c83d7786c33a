// Closed-loop streaming clients through the gateway, bounded in time; one JSON line per request to OUT.
//   node load.mjs OUT [clients=20] [seconds=60] [key=pgw-local-dev-key] [maxTokens=120]
// Each client loops: a streamed chat request (one of 8 shared system prompts, so affinity matters), read to the end,
// record {t0 (ms since start), status, backend, route, ttft, ms, done ([DONE] seen), errEvent (an SSE error event),
// err (exception text), code (error code of a non-200)}. Every request has a 90 s deadline; a refused request (429)
// waits its retry-after (at most 2 s) before the next, as an SDK would.
import { appendFileSync, writeFileSync } from "node:fs";
const [out, nClients = "20", seconds = "60", key = "pgw-local-dev-key", maxTokens = "120"] = process.argv.slice(2);
const G = "http://127.0.0.1:8787";
const start = Date.now();
const end = start + Number(seconds) * 1000;
writeFileSync(out, "");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function one(c, n) {
  const t0 = Date.now();
  const rec = { c, n, t0: t0 - start };
  try {
    const r = await fetch(`${G}/v1/chat/completions`, {
      method: "POST",
      signal: AbortSignal.timeout(90_000),
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "llama-3.1-8b-instruct", stream: true, max_tokens: Number(maxTokens),
        messages: [{ role: "system", content: `Tenant ${c % 8}. ${"You answer questions about the fleet. ".repeat(30)}` },
          { role: "user", content: `client ${c} question ${n}` }] }),
    });
    Object.assign(rec, { status: r.status, backend: r.headers.get("x-prefix-gateway-backend"),
      route: r.headers.get("x-prefix-gateway-route"), retryAfter: r.headers.get("retry-after") });
    if (r.status !== 200) {
      const t = await r.text();
      try { rec.code = JSON.parse(t).error?.code; } catch { rec.code = t.slice(0, 80); }
    } else {
      const rd = r.body.getReader();
      const dec = new TextDecoder();
      let text = "";
      for (;;) {
        const { done, value } = await rd.read();
        if (done) break;
        if (rec.ttft === undefined) rec.ttft = Date.now() - t0;
        text += dec.decode(value, { stream: true });
      }
      rec.done = text.trimEnd().endsWith("data: [DONE]");
      const m = text.match(/data: (\{"error".*)/);
      if (m) { rec.errEvent = true; try { rec.code = JSON.parse(m[1]).error?.code ?? JSON.parse(m[1]).error?.type; } catch {} }
    }
  } catch (e) { rec.err = String(e).slice(0, 120); }
  rec.ms = Date.now() - t0;
  appendFileSync(out, JSON.stringify(rec) + "\n");
  return rec;
}
async function client(c) {
  for (let n = 0; Date.now() < end; n++) {
    const rec = await one(c, n);
    if (rec.status === 429) await sleep(Math.min(2000, Number(rec.retryAfter ?? 1) * 1000));
    else if (rec.status !== 200 || rec.err) await sleep(200);
  }
}
await Promise.all(Array.from({ length: Number(nClients) }, (_, c) => client(c)));
console.log(`load: ${nClients} clients, ${seconds} s, key ${key.slice(0, 8)}…, done`);
