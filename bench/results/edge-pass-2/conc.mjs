// 200 short streams at once through the gateway (one shot, bounded): 170 on the emulated llama pool, 30 on a
// second pool (m-e504: one backend answers 504, so some are retried). Every stream must end with [DONE] and no
// error event; afterwards every backend's in-flight count must be back to 0.
const G = "http://127.0.0.1:8787";
const H = { authorization: "Bearer pgw-local-dev-key", "content-type": "application/json" };
const one = async (i) => {
  const model = i < 170 ? "llama-3.1-8b-instruct" : "m-e504";
  const t0 = Date.now();
  try {
    const r = await fetch(G + "/v1/chat/completions", { method: "POST", headers: H, signal: AbortSignal.timeout(60_000),
      body: JSON.stringify({ model, stream: true, max_tokens: 16, stream_options: { include_usage: true },
        messages: [{ role: "system", content: "You are terse. ".repeat(20 + (i % 5)) }, { role: "user", content: `question ${i}` }] }) });
    const text = await r.text();
    return { i, model, status: r.status, backend: r.headers.get("x-prefix-gateway-backend"), ms: Date.now() - t0,
      done: text.trimEnd().endsWith("data: [DONE]"), error: text.includes('"error"'), usage: text.includes('"usage"') };
  } catch (e) { return { i, model, err: String(e) }; }
};
const t0 = Date.now();
const res = await Promise.all(Array.from({ length: 200 }, (_, i) => one(i)));
const bad = res.filter((r) => r.err || r.status !== 200 || !r.done || r.error);
const per = {};
for (const r of res) per[r.backend ?? "none"] = (per[r.backend ?? "none"] ?? 0) + 1;
console.log(`200 streams in ${Date.now() - t0} ms; bad: ${bad.length}`, JSON.stringify(bad.slice(0, 5)));
console.log("all with usage:", res.every((r) => r.usage), "per backend:", JSON.stringify(per));
console.log("slowest ms:", Math.max(...res.map((r) => r.ms ?? 0)));
