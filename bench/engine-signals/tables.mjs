// The tables of bench/results/engine-signals.md, from the simulator's JSON reports:
//   node bench/engine-signals/tables.mjs tuning   (p99 by scrape interval, tuning set)
//   node bench/engine-signals/tables.mjs scoring  (off vs 1000 ms, scoring set)
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "../results/engine-signals");
const fmt = (x) => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(0)} ms`);
const pct = (x) => `${(x * 100).toFixed(1)}%`;
const load = (dir, name) => JSON.parse(readFileSync(join(dir, `${name}.json`), "utf8"));
const ours = (r) => r.policies.find((p) => p.policy === "prefix_aware");
const bestPeer = (r) =>
  r.policies
    .filter((p) => ["sglang", "llmd", "dynamo"].includes(p.policy))
    .reduce((a, b) => (b.ttftP99Ms < a.ttftP99Ms ? b : a));
const who = { "sc0_3-2": "30% on engines 0–1", sc0_3: "30% over all 8", scnone: "none" };

function tuning() {
  const dir = join(root, "tuning");
  const intervals = [0, 250, 1000, 5000];
  console.log(
    "| workload | second client | p99 off | 250 ms | 1000 ms | 5000 ms | hit off → 1000 ms | best peer p99 |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  for (const sc of ["sc0_3-2", "sc0_3"])
    for (const w of ["gsp", "mt", "zipf", "mc"]) {
      const r = Object.fromEntries(intervals.map((ms) => [ms, load(dir, `${w}-${sc}-ms${ms}`)]));
      const best = bestPeer(r[0]);
      console.log(
        `| ${w} | ${who[sc]} | ${intervals.map((ms) => fmt(ours(r[ms]).ttftP99Ms)).join(" | ")} | ` +
          `${pct(ours(r[0]).hitRate)} → ${pct(ours(r[1000]).hitRate)} | ${best.policy} ${fmt(best.ttftP99Ms)} |`,
      );
    }
}

function scoring() {
  console.log(
    "| workload | second client | p99 off → 1000 ms | Δ | hit off → on | maxLoadRatio off → on | its requests' p99 off → on | best peer p99 | LO p99 |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|");
  for (const sc of ["sc0_3-2", "sc0_3", "scnone"])
    for (const w of ["gsp", "mt", "zipf", "mc"])
      for (const s of w === "mc" ? [""] : ["s3", "s4", "s5"]) {
        const stem = `${w}${s ? `-${s}` : ""}-${sc}`;
        if (!existsSync(join(root, `${stem}-ms0.json`))) continue;
        const off = load(root, `${stem}-ms0`);
        const on = load(root, `${stem}-ms1000`);
        const [a, b] = [ours(off), ours(on)];
        const best = bestPeer(on);
        const lo = on.policies.find((p) => p.policy === "least_outstanding");
        const second =
          a.secondClient && b.secondClient
            ? `${fmt(a.secondClient.ttftP99Ms)} → ${fmt(b.secondClient.ttftP99Ms)}`
            : "–";
        console.log(
          `| ${w}${s ? ` ${s}` : ""} | ${who[sc]} | ${fmt(a.ttftP99Ms)} → ${fmt(b.ttftP99Ms)} | ` +
            `${(((b.ttftP99Ms - a.ttftP99Ms) / a.ttftP99Ms) * 100).toFixed(0)}% | ${pct(a.hitRate)} → ${pct(b.hitRate)} | ` +
            `${a.maxLoadRatio.toFixed(2)} → ${b.maxLoadRatio.toFixed(2)} | ${second} | ${best.policy} ${fmt(best.ttftP99Ms)} | ${fmt(lo.ttftP99Ms)} |`,
        );
      }
}

if (process.argv[2] === "tuning") tuning();
else if (process.argv[2] === "scoring") scoring();
else {
  console.error("usage: node bench/engine-signals/tables.mjs tuning|scoring");
  process.exit(2);
}
