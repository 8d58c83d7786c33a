// A fake OpenAI-compatible backend for the edge-pass-2 probes: http://127.0.0.1:PORT/<mode>/v1/... answers
// the way <mode> says (a backend url of `${base}/<mode>` in BACKENDS). GET /counts shows how many calls each
// mode took and whether they carried the backend key. Bounded: every held response ends after HOLD_MS.
import { createServer } from "node:http";
const PORT = Number(process.argv[2] ?? 8201);
const HOLD_MS = 90_000;
const counts = {};
const vllmError = (status, message, type = "BadRequestError") =>
  JSON.stringify({ object: "error", message, type, param: null, code: status });
const okChat = (model) =>
  JSON.stringify({
    id: "cmpl-x", object: "chat.completion", created: 1, model,
    choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
    usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6, prompt_tokens_details: { cached_tokens: 0 } },
  });
const chunk = (model, content) =>
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
createServer((req, res) => {
  res.on("error", () => {});
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    if (req.url === "/counts") return res.end(JSON.stringify(counts));
    const [, mode, ...rest] = (req.url ?? "").split("/");
    const path = "/" + rest.join("/");
    if (path === "/health") return res.end("ok");
    const k = `${mode} ${req.method} ${path}`;
    counts[k] ??= { calls: 0, withBackendKey: 0 };
    counts[k].calls++;
    if (req.headers.authorization === "Bearer fault-backend-key") counts[k].withBackendKey++;
    let j = {};
    try { j = JSON.parse(body); } catch {}
    const model = j.model ?? "m";
    const hold = (then) => { const t = setTimeout(then, HOLD_MS); res.on("close", () => clearTimeout(t)); };
    const json = (s, b, h = {}) => { res.writeHead(s, { "content-type": "application/json", ...h }); res.end(b); };
    switch (mode) {
      case "ok":
        if (j.stream) {
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write(chunk(model, "o")); res.write(chunk(model, "k")); return res.end("data: [DONE]\n\n");
        }
        return json(200, okChat(model));
      case "e400": return json(400, vllmError(400, "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8990 in the messages, 10 in the completion). Please reduce the length of the messages or completion."));
      case "e404": return json(404, vllmError(404, `The model \`${model}\` does not exist.`, "NotFoundError"));
      case "e413": return json(413, vllmError(413, "Request entity too large", "RequestTooLarge"));
      case "e422": return json(422, JSON.stringify({ detail: [{ type: "missing", loc: ["body", "messages"], msg: "Field required" }] }));
      case "e500": return json(500, vllmError(500, "internal error", "InternalServerError"));
      case "e503ra": return json(503, vllmError(503, "engine overloaded", "ServiceUnavailable"), { "retry-after": "7" });
      case "e504": res.writeHead(504, { "content-type": "text/plain" }); return res.end("upstream timed out");
      case "empty200": res.writeHead(200, { "content-type": "application/json", "content-length": "0" }); return res.end();
      case "err200": return json(200, JSON.stringify({ error: { message: "engine died during generation", type: "InternalServerError", code: 500 } }));
      case "noheaders": return hold(() => res.destroy());
      case "stall":
        if (j.stream) { res.writeHead(200, { "content-type": "text/event-stream" }); res.write(chunk(model, "a")); }
        else { res.writeHead(200, { "content-type": "application/json" }); res.write('{"id":"x",'); }
        return hold(() => res.end());
      case "hdronly": res.writeHead(200, { "content-type": "application/json" }); res.flushHeaders(); return hold(() => res.end());
      case "sseerr": // vLLM's way of failing mid-stream: an error event, then [DONE], inside a 200
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(chunk(model, "a"));
        res.write(`data: ${JSON.stringify({ error: { object: "error", message: "EngineCore encountered an issue", type: "InternalServerError", code: 500 } })}\n\n`);
        return res.end("data: [DONE]\n\n");
      default: res.writeHead(404).end("no such mode");
    }
  });
}).listen(PORT, "127.0.0.1", () => console.log(`fault backend on ${PORT}`));
