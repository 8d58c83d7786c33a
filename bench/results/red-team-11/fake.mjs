// Throwaway fake backend for red-team-11 live probes: backends that answer 200 but wrongly.
// One path prefix per behaviour; each is its own model in dev-vars.txt. Usage: node fake.mjs PORT
import { createServer } from "node:http";
const port = Number(process.argv[2] ?? 28301);
const chunk = (c, extra = {}) => `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", model: "m", choices: [{ index: 0, delta: { content: c } }], ...extra })}\n\n`;
const usageEv = (u) => `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", model: "m", choices: [], usage: u })}\n\n`;
const U = { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 };
const jsonAnswer = (u = U) => JSON.stringify({ id: "x", object: "chat.completion", model: "m", choices: [{ index: 0, message: { role: "assistant", content: "hello" }, finish_reason: "stop" }], usage: u });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const counts = {};
createServer((req, res) => {
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", async () => {
    const [, kind] = req.url.split("/");
    counts[kind] = (counts[kind] ?? 0) + 1;
    if (req.url === "/counts") { res.end(JSON.stringify(counts)); return; }
    if (req.url.endsWith("/health")) { res.end("ok"); return; }
    if (req.url.endsWith("/v1/models")) { res.end('{"data":[]}'); return; }
    const stream = /"stream"\s*:\s*true/.test(body);
    const sse = () => res.writeHead(200, { "content-type": "text/event-stream" });
    const usageKinds = { uneg: { prompt_tokens: -5, completion_tokens: 2 }, ubig: { prompt_tokens: 1e12, completion_tokens: 1e12 }, ustr: { prompt_tokens: "10", completion_tokens: "2" }, umax: { prompt_tokens: 2 ** 30, completion_tokens: 2 ** 30, prompt_tokens_details: { cached_tokens: 2 ** 30 } } };
    switch (kind) {
      case "jsonforstream": // a JSON completion whatever was asked
        res.writeHead(200, { "content-type": "application/json" }); res.end(jsonAnswer()); return;
      case "sseforjson": // an event stream whatever was asked
        sse(); res.end(chunk("hello") + usageEv(U) + "data: [DONE]\n\n"); return;
      case "afterdone": { // [DONE], then more data events every 300 ms for 8 s
        sse(); res.write(chunk("hello") + usageEv(U) + "data: [DONE]\n\n");
        for (let i = 0; i < 27 && !res.destroyed; i++) { await sleep(300); res.write(chunk(`after${i}`)); }
        res.end(); return; }
      case "nodone": sse(); res.end(chunk("hello") + usageEv(U)); return;
      case "nousage": sse(); res.end(chunk("hello") + "data: [DONE]\n\n"); return;
      case "uneg": case "ubig": case "ustr": case "umax":
        if (stream) { sse(); res.end(chunk("hello") + usageEv(usageKinds[kind]) + "data: [DONE]\n\n"); }
        else { res.writeHead(200, { "content-type": "application/json" }); res.end(jsonAnswer(usageKinds[kind])); }
        return;
      case "stallmid": // one token, then silence with the connection open (60 s)
        sse(); res.write(chunk("hello")); await sleep(60000); res.end(); return;
      case "bigline": // one 5 MB data line in pieces, then usage and [DONE]
        sse(); res.write(`data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"`);
        for (let i = 0; i < 80; i++) res.write("y".repeat(65536));
        res.end(`"}}]}\n\n` + usageEv(U) + "data: [DONE]\n\n"); return;
      case "long": { // a long answer (N events, default 100k of ~200 B = ~20 MB), written as the socket takes it
        const n = Number(/"max_tokens"\s*:\s*(\d+)/.exec(body)?.[1] ?? 100000);
        sse(); const ev = chunk("tok ");
        for (let i = 0; i < n && !res.destroyed; i++) { if (!res.write(ev)) await new Promise((r) => res.once("drain", r)); }
        res.end(usageEv({ prompt_tokens: 10, completion_tokens: n }) + "data: [DONE]\n\n"); return; }
      default: res.writeHead(404); res.end("no such fake"); return;
    }
  });
}).listen(port, "127.0.0.1", () => console.log(`fake on ${port}`));
