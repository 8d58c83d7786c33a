// A throwaway backend for the twelfth pass (127.0.0.1 only): /waf (a firewall in front of an engine: 403 HTML for
// a body holding "DROP TABLE"), /refuse (200 + JSON context-length error for a body holding "TOO_LONG", streamed or
// not), /afterdone (the answer, [DONE] and one more event in the same write). Any other request: one token.
// `/_2/...` is the same under another backend url. /health and /v1/models answer 200.
import { createServer } from "node:http";
const port = Number(process.argv[2] ?? 28403);
const ev = (o) => `data: ${JSON.stringify(o)}\n\n`;
const tok = (t) => ev({ id: "x", object: "chat.completion.chunk", model: "m", choices: [{ index: 0, delta: { content: t } }] });
const usage = ev({ id: "x", object: "chat.completion.chunk", model: "m", choices: [], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } });
createServer(async (req, res) => {
  const url = (req.url ?? "").replace(/^\/_\d+(?=\/)/, "");
  let body = "";
  for await (const c of req) body += c;
  if (url.endsWith("/health")) return res.end("ok");
  if (url.endsWith("/v1/models")) {
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify({ object: "list", data: ["m-waf", "m-refuse", "m-afterdone"].map((id) => ({ id, object: "model" })) }));
  }
  let asked = {};
  try { asked = JSON.parse(body); } catch {}
  const stream = asked.stream === true;
  if (url.startsWith("/waf") && body.includes("DROP TABLE")) {
    res.writeHead(403, { "content-type": "text/html" });
    return res.end("<html><body><h1>403 Forbidden</h1>Request blocked by security policy.</body></html>");
  }
  if (url.startsWith("/refuse") && body.includes("TOO_LONG")) {
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify({ error: { message: "This model's maximum context length is 8192 tokens.", type: "invalid_request_error", param: "messages", code: "context_length_exceeded" } }));
  }
  if (stream) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    const after = url.startsWith("/afterdone") ? `${tok("AFTER-DONE")}: junk\n\n` : "";
    return res.end(`${tok("Hello")}${usage}data: [DONE]\n\n${after}`);
  }
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ id: "x", object: "chat.completion", model: "m", choices: [{ index: 0, message: { role: "assistant", content: "Hello" }, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }));
}).listen(port, "127.0.0.1");
