// The slow backend and event recorder for worker.js: /slow answers its headers at once (mode=headers) or not,
// and its first token at 4 s; /event records what the Worker reports; /log returns and clears the record.
import http from "node:http";

const events = [];
let t0 = 0;
http
  .createServer((req, res) => {
    if (req.url.startsWith("/event")) {
      events.push(`${req.url} at ${Date.now() - t0} ms`);
      res.end("ok");
      return;
    }
    if (req.url.startsWith("/slow")) {
      t0 = Date.now();
      res.on("close", () => events.push(`backend connection closed at ${Date.now() - t0} ms`));
      if (req.url.includes("headers")) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.flushHeaders();
      }
      setTimeout(() => {
        if (res.destroyed) return;
        if (!res.headersSent) res.writeHead(200, { "content-type": "text/event-stream" });
        res.write("data: first\n\n");
        events.push(`first token written at ${Date.now() - t0} ms`);
      }, 4000);
      return;
    }
    if (req.url === "/log") {
      res.end(JSON.stringify(events));
      events.length = 0;
      return;
    }
    res.end();
  })
  .listen(28101, "127.0.0.1");
