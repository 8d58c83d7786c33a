// A backend whose /metrics misbehaves: forwards every other request to an emulator unchanged.
//   node metrics-proxy.mjs LISTEN_PORT TARGET_PORT slow|huge|garbage
// slow: /metrics sends headers then one line every 5 s, forever (until the client leaves);
// huge: 64 MiB of valid-looking comment lines; garbage: 1 MiB of random bytes as text/plain.
import { randomBytes } from "node:crypto";
import http from "node:http";
const [listen, target, mode] = process.argv.slice(2);
let scrapes = 0;
http.createServer((req, res) => {
  if (req.url === "/metrics") {
    scrapes++;
    if (scrapes % 20 === 1) process.stdout.write(`${mode}: ${scrapes} scrapes\n`);
    res.writeHead(200, { "content-type": "text/plain; version=0.0.4" });
    if (mode === "slow") {
      const t = setInterval(() => res.write("# still here\n"), 5000);
      res.on("close", () => clearInterval(t));
      return;
    }
    if (mode === "garbage") return res.end(randomBytes(1 << 20));
    const line = "# padding padding padding padding padding padding padding padding padding padding pad\n".repeat(1024);
    let sent = 0;
    const pump = () => { while (sent < 64 << 20) { sent += line.length; if (!res.write(line)) return res.once("drain", pump); } res.end(); };
    res.on("close", () => { sent = Infinity; });
    return pump();
  }
  const up = http.request({ host: "127.0.0.1", port: target, path: req.url, method: req.method, headers: req.headers }, (r) => {
    res.writeHead(r.statusCode, r.headers);
    r.pipe(res);
  });
  up.on("error", () => { res.destroy(); });
  req.pipe(up);
  res.on("close", () => up.destroy());
}).listen(Number(listen), "127.0.0.1", () => process.stdout.write(`metrics-proxy :${listen} -> :${target} (${mode})\n`));
