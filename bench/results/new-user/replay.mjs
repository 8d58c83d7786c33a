// Sends the first N records of an OpenAI request log to the gateway, `conc` at a time, in log order.
import { readFileSync } from "node:fs";
const [file, n = "300", conc = "8"] = process.argv.slice(2);
const lines = readFileSync(file, "utf8").split("\n").filter(Boolean).slice(0, Number(n)).map((l) => JSON.parse(l));
let next = 0, ok = 0, bad = 0;
const ttft = [];
async function worker() {
  while (next < lines.length) {
    const r = lines[next++];
    const t0 = performance.now();
    const res = await fetch("http://127.0.0.1:8787/v1/chat/completions", {
      method: "POST",
      headers: { authorization: "Bearer pgw-local-dev-key", "content-type": "application/json" },
      body: JSON.stringify({ model: r.model, messages: r.messages, max_tokens: Math.min(r.max_tokens ?? 32, 32), stream: true }),
    });
    const reader = res.body.getReader();
    let first = true;
    for (;;) { const { done } = await reader.read(); if (first) { ttft.push(performance.now() - t0); first = false; } if (done) break; }
    res.ok ? ok++ : bad++;
  }
}
await Promise.all(Array.from({ length: Number(conc) }, worker));
ttft.sort((a, b) => a - b);
console.log(JSON.stringify({ ok, bad, ttftP50: ttft[Math.floor(ttft.length / 2)] }));
