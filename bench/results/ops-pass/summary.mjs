// Summarises load.mjs output in windows: node summary.mjs FILE [windowSeconds=5] [backend-filter]
// Per window (by request start): requests, ok (200 + [DONE], no error event), non-200 by status:code, cut/err events,
// exceptions, TTFT p50 / max of the ok ones, per-backend counts. A last line totals it.
import { readFileSync } from "node:fs";
const [file, w = "5"] = process.argv.slice(2);
const recs = readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
const win = Number(w) * 1000;
const q = (a, p) => (a.length ? a.sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(p * a.length))] : "-");
function line(label, rs) {
  const ok = rs.filter((r) => r.status === 200 && r.done && !r.errEvent);
  const bad = {};
  for (const r of rs) {
    if (r.status === 200 && r.done && !r.errEvent) continue;
    const k = r.err ? `exc:${r.err.slice(0, 40)}` : r.status !== 200 ? `${r.status}:${r.code}` : r.errEvent ? `event:${r.code}` : "cut";
    bad[k] = (bad[k] ?? 0) + 1;
  }
  const per = {};
  for (const r of rs) per[r.backend ?? "-"] = (per[r.backend ?? "-"] ?? 0) + 1;
  const ttft = ok.map((r) => r.ttft);
  console.log(`${label.padEnd(9)} n=${String(rs.length).padStart(4)} ok=${String(ok.length).padStart(4)} ttft p50=${q(ttft, 0.5)} p99=${q([...ttft], 0.99)} max=${ttft.length ? Math.max(...ttft) : "-"} ms, longest=${Math.max(...rs.map((r) => r.ms))} ms  ${JSON.stringify(bad)}  ${Object.entries(per).sort().map(([k, v]) => `${k}:${v}`).join(" ")}`);
}
const maxT = Math.max(...recs.map((r) => r.t0));
for (let t = 0; t <= maxT; t += win) line(`${t / 1000}s`, recs.filter((r) => r.t0 >= t && r.t0 < t + win));
line("total", recs);
