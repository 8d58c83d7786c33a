// A client of worker.js that leaves at 300 ms with a FIN or an RST; prints what rec.mjs recorded by 6 s.
// Usage: node client.mjs headers|none fin|rst 0|1   (backend sends headers at once or not; hold a waitUntil or not)
import http from "node:http";

const [mode = "none", how = "fin", hold = "0"] = process.argv.slice(2);
const req = http.request(
  { host: "127.0.0.1", port: 28102, path: `/?mode=${mode}&hold=${hold}`, method: "POST" },
  (res) => res.resume(),
);
req.on("error", () => {});
req.end("{}");
setTimeout(() => {
  if (how === "rst") req.socket?.resetAndDestroy();
  else req.destroy();
}, 300);
setTimeout(async () => {
  console.log(how, mode, `hold=${hold}`, await (await fetch("http://127.0.0.1:28101/log")).text());
  process.exit(0);
}, 6000);
