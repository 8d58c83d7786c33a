// Is the cost model's predicted wait on the holder right? (branch `hit-8b`). An audit, simulator only.
// prefix_aware routes a run as bench:sim runs it (decision-regret/collect.ts: the same trajectory, and at each
// decision every backend's engine is copied and stepped with the request until its first token, the exact
// TTFT it would have had there, later arrivals aside). Per decision: the holder h = the engine that held the
// most of the prompt at the decision (engine truth), the chosen c. A placement that lost hit (held_h > held_c
// by a block or more) is classed as hit-gaps/breakdown.ts classes it, from the policy's view: the holder not a
// candidate (work bound, shared cap, hold back), or a candidate priced higher by Δ = cost_h − cost_c
// (≤ 50 ms, 50 ms–1 s, > 1 s). For each class, the cost model's prediction against the exact TTFT, on the
// holder and on the chosen, token-weighted by the hit lost (and plain means).
//   MOONCAKE_TRACE=... npx tsx bench/results/hit-8b/bias.ts BACKENDS SPEED SET SEEDS [PRESET]
//   e.g. npx tsx bench/results/hit-8b/bias.ts 8 2.5 tuning 1 llama-3.1-8b-h100-vllm
import { loadAuditRun } from "../audit-run";
import { collectDecisions, type BackendAt, type Decision } from "../decision-regret/collect";

const [backendsS = "8", speedS = "2.5", set = "tuning", seedsS = "1", preset = "llama-3.1-8b-h100-vllm"] =
  process.argv.slice(2);
const SHOW = Number(process.env.SHOW ?? 0);

interface Row {
  d: Decision;
  h: number;
  c: number;
  lost: number;
  cls: string;
}
const CLASSES = ["not a candidate", "cost Δ ≤ 50 ms", "cost Δ 50 ms–1 s", "cost Δ > 1 s"] as const;
const rows: Row[] = [];
const runs: string[] = [];
let totalPrompt = 0;
for (const seed of seedsS.split(",").map(Number)) {
  const { w, fleet } = await loadAuditRun({ spec: "mooncake", backends: Number(backendsS), load: Number(speedS), set, seed, preset });
  const t0 = performance.now();
  const res = collectDecisions(w, fleet);
  runs.push(
    `- seed ${seed}: ${res.decisions.length} requests, TTFT p50 ${res.p50.toFixed(1)} ms, p99 ${res.p99.toFixed(1)} ms, hit ${(100 * res.hitRate).toFixed(2)}%, maxLoadRatio ${res.maxLoadRatio.toFixed(2)}, learned rate ${res.learnedRate.toFixed(0)} tok/s (${((performance.now() - t0) / 1000).toFixed(0)} s)`,
  );
  for (const d of res.decisions) {
    totalPrompt += d.promptTokens;
    const c = d.chosen;
    let h = c;
    for (let b = 0; b < d.at.length; b++) if (d.at[b]!.cachedTokens > d.at[h]!.cachedTokens) h = b;
    const lost = d.at[h]!.cachedTokens - d.at[c]!.cachedTokens;
    if (h === c || lost < 16) continue;
    const H = d.at[h]!;
    const C = d.at[c]!;
    let cls: string = CLASSES[0];
    if (H.candidate) {
      const delta = H.cost - C.cost;
      cls = delta <= 50 ? CLASSES[1] : delta <= 1000 ? CLASSES[2] : CLASSES[3];
    }
    rows.push({ d, h, c, lost, cls });
  }
}

const f0 = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : "–");
console.log(`# Cost model against exact TTFT where hit was lost: Mooncake, ${backendsS} backends, ×${speedS}, ${set} seeds ${seedsS}, ${preset}\n`);
for (const r of runs) console.log(r);
console.log(
  `\nh = the engine holding most of the prompt at the decision, c = the chosen; predicted = the cost model's total (start + prefill + kv + in-flight), "wait" = its start term; exact = the request's TTFT had it gone there (engine copy at the decision). Means weighted by the tokens of hit lost; [plain means]. "holder faster" = exact TTFT on h below c's: a refusal the exact TTFT does not support.\n`,
);
console.log(
  "| class | requests | hit lost (points) | predicted h | exact h | bias h | predicted c | exact c | bias c | predicted Δ (h − c) | exact Δ (h − c) | wait h: predicted | holder faster (by tokens) | exact Δ when holder faster |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
for (const cls of CLASSES) {
  const rs = rows.filter((r) => r.cls === cls);
  if (rs.length === 0) continue;
  const W = rs.reduce((a, r) => a + r.lost, 0);
  const wm = (f: (r: Row) => number, sub = rs) => {
    const ww = sub.reduce((a, r) => a + r.lost, 0);
    return ww === 0 ? Number.NaN : sub.reduce((a, r) => a + r.lost * f(r), 0) / ww;
  };
  const pm = (f: (r: Row) => number) => rs.reduce((a, r) => a + f(r), 0) / rs.length;
  const ph = (r: Row) => r.d.at[r.h]!.cost;
  const eh = (r: Row) => r.d.at[r.h]!.ttft;
  const pcst = (r: Row) => r.d.at[r.c]!.cost;
  const ec = (r: Row) => r.d.at[r.c]!.ttft;
  const both = (f: (r: Row) => number) => `${f0(wm(f))} [${f0(pm(f))}]`;
  const faster = rs.filter((r) => eh(r) < ec(r));
  const fW = faster.reduce((a, r) => a + r.lost, 0);
  console.log(
    `| ${cls} | ${rs.length} | ${((100 * W) / totalPrompt).toFixed(2)} | ${both(ph)} | ${both(eh)} | ${both((r) => ph(r) - eh(r))} | ${both(pcst)} | ${both(ec)} | ${both((r) => pcst(r) - ec(r))} | ${both((r) => ph(r) - pcst(r))} | ${both((r) => eh(r) - ec(r))} | ${both((r) => r.d.at[r.h]!.start)} | ${((100 * fW) / W).toFixed(0)}% (${faster.length}) | ${f0(wm((r) => eh(r) - ec(r), faster))} |`,
  );
}
// The TTFT proper (start + prefill) against the exact TTFT: the kv and in-flight terms are prices, not time.
console.log(
  "\nThe same cost classes, the TTFT part of the cost only (start + prefill; kv and in-flight terms left out), token-weighted [plain]; |error of Δ| = |predicted Δ − exact Δ|, per request.\n",
);
console.log("| class | bias h | bias c | predicted Δ | exact Δ | kv + in-flight Δ (h − c) | |error of Δ|, total cost | |error of Δ|, TTFT part |");
console.log("|---|---|---|---|---|---|---|---|");
for (const cls of CLASSES.slice(1)) {
  const rs = rows.filter((r) => r.cls === cls);
  if (rs.length === 0) continue;
  const W = rs.reduce((a, r) => a + r.lost, 0);
  const wm = (f: (r: Row) => number) => rs.reduce((a, r) => a + r.lost * f(r), 0) / W;
  const pm = (f: (r: Row) => number) => rs.reduce((a, r) => a + f(r), 0) / rs.length;
  const both = (f: (r: Row) => number) => `${f0(wm(f))} [${f0(pm(f))}]`;
  const tp = (x: BackendAt) => x.start + x.prefill;
  const H = (r: Row) => r.d.at[r.h]!;
  const C = (r: Row) => r.d.at[r.c]!;
  console.log(
    `| ${cls} | ${both((r) => tp(H(r)) - H(r).ttft)} | ${both((r) => tp(C(r)) - C(r).ttft)} | ${both((r) => tp(H(r)) - tp(C(r)))} | ${both((r) => H(r).ttft - C(r).ttft)} | ${both((r) => H(r).kv + H(r).inflightTerm - C(r).kv - C(r).inflightTerm)} | ${both((r) => Math.abs(H(r).cost - C(r).cost - (H(r).ttft - C(r).ttft)))} | ${both((r) => Math.abs(tp(H(r)) - tp(C(r)) - (H(r).ttft - C(r).ttft)))} |`,
  );
}
// The holder's bias split by what the holder had of ours in flight: is the over-prediction in its queue?
console.log("\nCost classes, by the holder's predicted wait (start term): bias on h and c, token-weighted.\n");
console.log("| holder's predicted wait | requests | hit lost (points) | predicted h | exact h | bias h | bias c | holder faster (by tokens) |");
console.log("|---|---|---|---|---|---|---|---|");
const cost = rows.filter((r) => r.cls !== CLASSES[0]);
for (const [lo, hi] of [
  [0, 1],
  [1, 500],
  [500, 2000],
  [2000, 1e12],
] as const) {
  const rs = cost.filter((r) => r.d.at[r.h]!.start >= lo && r.d.at[r.h]!.start < hi);
  if (rs.length === 0) continue;
  const W = rs.reduce((a, r) => a + r.lost, 0);
  const wm = (f: (r: Row) => number) => rs.reduce((a, r) => a + r.lost * f(r), 0) / W;
  const fW = rs.filter((r) => r.d.at[r.h]!.ttft < r.d.at[r.c]!.ttft).reduce((a, r) => a + r.lost, 0);
  console.log(
    `| [${lo}, ${hi === 1e12 ? "∞" : hi}) ms | ${rs.length} | ${((100 * W) / totalPrompt).toFixed(2)} | ${f0(wm((r) => r.d.at[r.h]!.cost))} | ${f0(wm((r) => r.d.at[r.h]!.ttft))} | ${f0(wm((r) => r.d.at[r.h]!.cost - r.d.at[r.h]!.ttft))} | ${f0(wm((r) => r.d.at[r.c]!.cost - r.d.at[r.c]!.ttft))} | ${((100 * fW) / W).toFixed(0)}% |`,
  );
}
// Which term carried the refusal: the TTFT part (start + prefill) alone would already have priced the holder
// higher, or only the prices (kv + in-flight) did. And whether the exact TTFT agreed.
{
  console.log("\nCost-class losses by what priced the holder higher, token-weighted: holder faster = exact TTFT on h below c's.\n");
  console.log("| refusal carried by | requests | hit lost (points) | holder faster (by tokens) | exact Δ (h − c) | TTFT-part Δ | kv + in-flight Δ | of which kv |");
  console.log("|---|---|---|---|---|---|---|---|");
  const tp = (x: BackendAt) => x.start + x.prefill;
  const groups: [string, (r: Row) => boolean][] = [
    ["the TTFT part (start + prefill)", (r) => tp(r.d.at[r.h]!) > tp(r.d.at[r.c]!)],
    ["the kv + in-flight terms only", (r) => tp(r.d.at[r.h]!) <= tp(r.d.at[r.c]!)],
  ];
  for (const [label, pick] of groups) {
    const rs = cost.filter(pick);
    if (rs.length === 0) continue;
    const W = rs.reduce((a, r) => a + r.lost, 0);
    const wm = (f: (r: Row) => number) => rs.reduce((a, r) => a + r.lost * f(r), 0) / W;
    const fW = rs.filter((r) => r.d.at[r.h]!.ttft < r.d.at[r.c]!.ttft).reduce((a, r) => a + r.lost, 0);
    const H = (r: Row) => r.d.at[r.h]!;
    const C = (r: Row) => r.d.at[r.c]!;
    console.log(
      `| ${label} | ${rs.length} | ${((100 * W) / totalPrompt).toFixed(2)} | ${((100 * fW) / W).toFixed(0)}% | ${f0(wm((r) => H(r).ttft - C(r).ttft))} | ${f0(wm((r) => tp(H(r)) - tp(C(r))))} | ${f0(wm((r) => H(r).kv + H(r).inflightTerm - C(r).kv - C(r).inflightTerm))} | ${f0(wm((r) => H(r).kv - C(r).kv))} |`,
    );
  }
}
if (SHOW > 0) {
  console.log(`\nThe ${SHOW} cost-class losses with the most tokens lost:\n`);
  const fmt = (x: BackendAt) =>
    `cost ${f0(x.cost)} (wait ${f0(x.start)}, prefill ${f0(x.prefill)}, kv ${f0(x.kv)}, infl ${f0(x.inflightTerm)}) exact ${f0(x.ttft)}, held ${x.cachedTokens}, ours ${x.ours}, engine run ${x.running} wait ${x.waiting}`;
  for (const r of [...cost].sort((a, b) => b.lost - a.lost).slice(0, SHOW))
    console.log(`- #${r.d.i} prompt ${r.d.promptTokens}: holder ${r.h}: ${fmt(r.d.at[r.h]!)} | chosen ${r.c}: ${fmt(r.d.at[r.c]!)} | realized ${f0(r.d.realized)}`);
}
