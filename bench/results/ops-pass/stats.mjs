// Prints each pool's backends (in flight, health, consecutive faults), counters and arm totals from /admin/stats.
// node stats.mjs [pool-prefix]
const only = process.argv[2] ?? "";
const r = await fetch("http://127.0.0.1:8787/admin/stats", { headers: { authorization: "Bearer pgw-local-admin-token" } });
const d = await r.json();
for (const [m, p] of Object.entries(d.pools)) {
  if (!m.startsWith(only)) continue;
  if (!p.ok) { console.log(m, JSON.stringify(p)); continue; }
  const a = p.arms.map((x) => `${x.arm}:req=${x.requests},done=${x.completed},err=${x.errors}`).join(" ");
  const c = p.counters;
  console.log(m.padEnd(22), p.backends.map((b) => `${b.id}:inf=${b.inflight}:${b.healthy ? "up" : "DOWN"}:cf=${b.consecutiveFailures}${b.throttled ? ":throttled" : ""}`).join(" "),
    `| retried=${c.retried} refused=${c.retriesRefused} ejections=${c.ejections} | ${a}`);
}
