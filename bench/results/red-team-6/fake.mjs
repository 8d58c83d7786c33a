// Throwaway fake backend for red-team-6 live probes. One path prefix per behaviour.
import { createServer } from "node:http";
import { gzipSync, brotliCompressSync, deflateSync } from "node:zlib";
const port = Number(process.argv[2] ?? 8965);
const tok = (c, sep = " ") => `data:${sep}${JSON.stringify({ id: "x", object: "chat.completion.chunk", model: "m", choices: [{ index: 0, delta: { content: c } }] })}`;
const usage = (sep = " ") => `data:${sep}${JSON.stringify({ id: "x", object: "chat.completion.chunk", model: "m", choices: [], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } })}`;
const jsonAnswer = (model = "m") => JSON.stringify({ id: "x", object: "chat.completion", model, choices: [{ index: 0, message: { role: "assistant", content: "hello" }, finish_reason: "stop" }], usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } });
const seen = [];
createServer((req, res) => {
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", async () => {
    const [, kind] = req.url.split("/");
    seen.push({ kind, url: req.url, auth: req.headers.authorization ?? null, host: req.headers.host, ae: req.headers["accept-encoding"] ?? null, hdrs: Object.keys(req.headers) });
    if (req.url === "/seen") { res.end(JSON.stringify(seen)); return; }
    if (req.url.endsWith("/health")) { res.end("ok"); return; }
    if (req.url.endsWith("/v1/models")) { res.end('{"data":[]}'); return; }
    const stream = body.includes('"stream":true');
    const sse = (h = {}) => res.writeHead(200, { "content-type": "text/event-stream", ...h });
    switch (kind) {
      case "nospace": { // data: without a space
        sse(); res.end([tok("A", ""), tok("B", ""), usage(""), "data:[DONE]", ""].join("\n\n")); return; }
      case "multiline": { // one event's JSON over two data lines (SSE joins them with \n)
        sse(); const j = JSON.stringify({ id: "x", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } });
        res.end([tok("A"), `data: ${j.slice(0, j.indexOf(",") + 1)}\ndata: ${j.slice(j.indexOf(",") + 1)}`, "data: [DONE]", ""].join("\n\n")); return; }
      case "idfield": { // event: and id: lines, as some servers send
        sse(); res.end([`id: 1\nevent: message\n${tok("A")}`, `id: 2\n${usage()}`, `id: 3\ndata: [DONE]`, ""].join("\n\n")); return; }
      case "bom": { sse(); res.end("\ufeff" + [tok("A"), usage(), "data: [DONE]", ""].join("\n\n")); return; }
      case "tiny": { // every byte its own chunk, usage chunk included
        sse(); const s = [tok("héllo 😀"), usage(), "data: [DONE]", ""].join("\r\n\r\n");
        const b = Buffer.from(s); for (let i = 0; i < b.length; i++) { res.write(b.subarray(i, i + 1)); await new Promise((r) => setImmediate(r)); } res.end(); return; }
      case "gzip": case "br": case "deflate": {
        const text = stream ? [tok("Z"), usage(), "data: [DONE]", ""].join("\n\n") : jsonAnswer();
        const enc = kind === "gzip" ? gzipSync(text) : kind === "br" ? brotliCompressSync(text) : deflateSync(text);
        res.writeHead(200, { "content-type": stream ? "text/event-stream" : "application/json", "content-encoding": kind, "content-length": enc.length });
        res.end(enc); return; }
      case "badenc": { // claims gzip, sends plain text
        const text = stream ? [tok("Z"), usage(), "data: [DONE]", ""].join("\n\n") : jsonAnswer();
        res.writeHead(200, { "content-type": stream ? "text/event-stream" : "application/json", "content-encoding": "gzip" });
        res.end(text); return; }
      case "cllong": { // content-length claims more than is sent, then close
        const text = stream ? [tok("Z"), usage(), "data: [DONE]", ""].join("\n\n") : jsonAnswer();
        res.writeHead(200, { "content-type": stream ? "text/event-stream" : "application/json", "content-length": Buffer.byteLength(text) + 100 });
        res.write(text); setTimeout(() => res.socket.destroy(), 100); return; }
      case "clshort": { // content-length claims less than is sent
        const text = stream ? [tok("Z"), usage(), "data: [DONE]", ""].join("\n\n") : jsonAnswer();
        res.socket.write(`HTTP/1.1 200 OK\r\ncontent-type: ${stream ? "text/event-stream" : "application/json"}\r\ncontent-length: ${Buffer.byteLength(text) - 30}\r\n\r\n${text}`);
        res.socket.end(); return; }
      case "othermodel": {
        if (stream) { sse(); res.end([tok("A").replace('"model":"m"', '"model":"gpt-4o"'), usage(), "data: [DONE]", ""].join("\n\n")); }
        else { res.writeHead(200, { "content-type": "application/json" }); res.end(jsonAnswer("gpt-4o")); }
        return; }
      case "redir302": { res.writeHead(302, { location: `http://127.0.0.1:${port + 1}/v1/chat/completions` }); res.end(); return; }
      case "redir308": { res.writeHead(308, { location: `http://127.0.0.1:${port}/echo/v1/chat/completions` }); res.end(); return; }
      case "echo": { res.writeHead(200, { "content-type": "application/json" }); res.end(jsonAnswer()); return; }
      case "e403": { res.writeHead(403, { "content-type": "text/html" }); res.end("<html>forbidden</html>"); return; }
      case "setcookie": { // backend headers that must not reach the client
        res.writeHead(200, { "content-type": "application/json", "set-cookie": "session=abc; Path=/", "x-internal-host": "gpu-17.internal", server: "vllm" }); res.end(jsonAnswer()); return; }
      case "big": { // a fast, large stream: 100 MB of tokens as fast as the socket takes it
        sse(); const ev = tok("x".repeat(1000)) + "\n\n"; let sent = 0; const max = 100 * 1024 * 1024;
        const pump = () => { while (sent < max) { sent += ev.length; if (!res.write(ev)) { res.once("drain", pump); return; } } res.end(usage() + "\n\ndata: [DONE]\n\n"); console.error(`big: all ${sent} written`); };
        const iv = setInterval(() => console.error(`big: ${sent} written so far`), 5000);
        res.on("close", () => { clearInterval(iv); console.error(`big: closed after ${sent}`); });
        pump(); return; }
      default: res.writeHead(404); res.end("no");
    }
  });
}).listen(port, "127.0.0.1", () => console.error(`fake on ${port}`));
// a second server: the redirect target, logs what it got
createServer((req, res) => { console.error(`TARGET got ${req.method} ${req.url} auth=${req.headers.authorization}`); res.writeHead(200, { "content-type": "application/json" }); res.end(jsonAnswer()); }).listen(port + 1, "127.0.0.1");
