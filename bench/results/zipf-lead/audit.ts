// Zipf's tail against the capped clairvoyant (branch `zipf-lead`). An audit only: nothing here feeds the router.
//   npx tsx bench/results/zipf-lead/audit.ts [LOAD] [SET] [SEEDS] [PRESET]
// defaults: 65 tuning 1,2 qwen3-30b-a3b-h100-vllm (Zipf 8B: 40 ... llama-3.1-8b-h100-vllm).
// 1. prefix_aware's own trajectory (decision-regret/collect.ts): at each decision the exact TTFT on every
//    backend (engine copies). "Capped best" is the backend the capped clairvoyant would pick there: least exact
//    TTFT among backends under the bounded-load cap in requests, c = 1.25 (sim/clairvoyant.ts).
//    For our slowest 1%: chosen − capped best, split into what the gateway could know and what it cannot.
// 2. The capped clairvoyant's own trajectory (sim/clairvoyant.ts clairvoyantFactory, c = 1.25): its slowest 1%,
//    whether those requests are in ours, and how slow they were for us.
import { quantileOf } from "../audit-run";
import { loadAuditRun } from "../audit-run";
import { CLAIRVOYANT_VIEW, clairvoyantFactory } from "../../../sim/clairvoyant";
import { type RouterFactory, simulatePolicy } from "../../../sim/simulator";
import { boundedCap } from "../../../src/routing/bounded-load";
import { collectDecisions, type Decision } from "../decision-regret/collect";

const [loadS = "65", set = "tuning", seedsS = "1,2", preset = "qwen3-30b-a3b-h100-vllm"] = process.argv.slice(2);
const C = 1.25;
const f1 = (x: number) => x.toFixed(1);
const pc = (x: number) => `${(100 * x).toFixed(0)}%`;
const med = (xs: number[]) => (xs.length ? quantileOf(xs, 0.5) : Number.NaN);
const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / Math.max(1, xs.length);

/** The capped clairvoyant's pick at one of our decisions: least exact TTFT under the cap (held = ours in flight). */
function cappedBest(d: Decision): number {
  const total = d.at.reduce((a, x) => a + x.ours, 0);
  const cap = boundedCap(1, d.at.length, total, C);
  let best = -1;
  for (let b = 0; b < d.at.length; b++) {
    const x = d.at[b]!;
    if (x.ours >= cap) continue;
    if (best < 0 || x.ttft < d.at[best]!.ttft - 1e-6 || (Math.abs(x.ttft - d.at[best]!.ttft) <= 1e-6 && x.ours < d.at[best]!.ours)) best = b;
  }
  return best;
}

/** The clairvoyant run, with each request's TTFT and backend. */
function clairvoyantRun(w: Parameters<typeof clairvoyantFactory>[0], fleet: Parameters<typeof simulatePolicy>[1]) {
  const n = w.requests.length;
  const ttft = new Float64Array(n).fill(Number.NaN);
  const placed = new Int32Array(n).fill(-1);
  const inner = clairvoyantFactory(w, "ttft", (i, b) => { placed[i] = b; }, C);
  const make: RouterFactory = (specs, readings, engines) => {
    const r = inner(specs, readings, engines);
    const index = new Map<unknown, number>();
    let k = 0;
    return {
      route(req, ctx) {
        const out = r.route(req, ctx);
        const t = { k: k++, inner: out.ticket };
        index.set(t, t.k);
        return { ...out, ticket: t };
      },
      ...(r.scraped ? { scraped: r.scraped.bind(r) } : {}),
      complete(ticket, outcome, ctx) {
        const t = ticket as { k: number; inner: unknown };
        ttft[t.k] = outcome.ttftMs ?? Number.NaN;
        r.complete(t.inner, outcome, ctx);
      },
    };
  };
  const res = simulatePolicy(w, fleet, "clairvoyant_ttft_capped", make, CLAIRVOYANT_VIEW);
  return { ttft, placed, p99: res.ttftP99Ms, hit: res.hitRate, mlr: res.maxLoadRatio };
}

interface Row {
  seed: number;
  d: Decision;
  cb: number;
  delta: number;
}
const rows: Row[] = [];
const cvRows: { seed: number; i: number; cv: number; ours: number; oursTail: boolean; oursRegret: number; stepShare: number }[] = [];
console.log(`# Zipf, ${preset}, ${loadS} req/s, ${set} seeds ${seedsS}: prefix_aware's slowest 1% against the capped clairvoyant (c = ${C})\n`);
console.log("| seed | prefix_aware p99 | clairvoyant capped p99 | its hit / ours | requests in both slowest 1% | outputs (distinct lengths) |");
console.log("|---|---|---|---|---|---|");
for (const seed of seedsS.split(",").map(Number)) {
  const { w, fleet } = await loadAuditRun({ spec: "zipf", backends: 8, load: Number(loadS), set, seed, preset });
  const ours = collectDecisions(w, fleet);
  const cv = clairvoyantRun(w, fleet);
  const realized = ours.decisions.map((d) => d.realized);
  const from = quantileOf(realized, 0.99);
  const cvFrom = quantileOf(Array.from(cv.ttft), 0.99);
  const ourTail = new Set(ours.decisions.filter((d) => d.realized >= from).map((d) => d.i));
  const cvTail = Array.from(cv.ttft.keys()).filter((i) => cv.ttft[i]! >= cvFrom);
  for (const i of ourTail) {
    const d = ours.decisions[i]!;
    const cb = cappedBest(d);
    rows.push({ seed, d, cb, delta: d.at[d.chosen]!.ttft - d.at[cb]!.ttft });
  }
  for (const i of cvTail) {
    const d = ours.decisions[i]!;
    const cb = cappedBest(d);
    const delta = d.at[d.chosen]!.ttft - d.at[cb]!.ttft;
    cvRows.push({
      seed, i, cv: cv.ttft[i]!, ours: d.realized, oursTail: ourTail.has(i), oursRegret: delta,
      stepShare: delta > 0 ? (d.at[d.chosen]!.stepWait - d.at[cb]!.stepWait) / delta : 0,
    });
  }
  const outs = new Set(w.requests.map((r) => r.outputTokens));
  console.log(
    `| ${seed} | ${f1(ours.p99)} ms | ${f1(cv.p99)} ms (mlr ${cv.mlr.toFixed(2)}) | ${pc(cv.hit)} / ${pc(ours.hitRate)} | ${cvTail.filter((i) => ourTail.has(i)).length} of ${ourTail.size} / ${cvTail.length} | ${outs.size} (${[...outs].slice(0, 3).join(", ")}) |`,
  );
}

// Our tail, decision by decision: why the capped clairvoyant's pick was faster.
const x = (r: Row, b: number) => r.d.at[b]!;
const holdsPrefill = (r: Row, b: number) => x(r, b).running > x(r, b).decoding;
const regretted = rows.filter((r) => r.delta > 10);
const sum = (rs: Row[], f: (r: Row) => number) => rs.reduce((a, r) => a + f(r), 0);
const total = sum(regretted, (r) => r.delta);
const dStep = (r: Row) => x(r, r.d.chosen).stepWait - x(r, r.cb).stepWait;
const uncached = (r: Row, b: number) => r.d.promptTokens - x(r, b).cachedTokens;
const stepPrefill = regretted.filter((r) => holdsPrefill(r, r.d.chosen));
const stepDecode = regretted.filter((r) => !holdsPrefill(r, r.d.chosen));
console.log(`\n## Our slowest 1% (${rows.length} requests): chosen backend against the capped clairvoyant's pick at the same decision\n`);
console.log("| quantity | value |\n|---|---|");
const line = (k: string, v: string) => console.log(`| ${k} | ${v} |`);
line("TTFT realized, p50", `${f1(med(rows.map((r) => r.d.realized)))} ms`);
line("chose the capped pick (Δ ≤ 1 ms) / Δ ≤ 10 ms / Δ > 10 ms", `${rows.filter((r) => r.delta <= 1).length} / ${rows.filter((r) => r.delta <= 10).length} / ${regretted.length}`);
line("Δ exact TTFT (chosen − capped pick), p50 / mean", `${f1(med(rows.map((r) => r.delta)))} / ${f1(mean(rows.map((r) => r.delta)))} ms`);
line("Δ ÷ realized TTFT, mean", pc(mean(rows.map((r) => r.delta / r.d.realized))));
line("over Δ > 10 ms: Σ Δ step in progress ÷ Σ Δ (engine's live step: not observable)", pc(sum(regretted, dStep) / total));
line("  of Σ Δ, where the chosen engine's step carries a prefill (one we sent)", pc(sum(stepPrefill, (r) => r.delta) / total));
line("  of Σ Δ, where the chosen engine's step is decode only (its phase)", pc(sum(stepDecode, (r) => r.delta) / total));
line("Δ step in progress, p50: chosen / capped pick", `${f1(med(regretted.map((r) => x(r, r.d.chosen).stepWait)))} / ${f1(med(regretted.map((r) => x(r, r.cb).stepWait)))} ms`);
line("Δ uncached prompt tokens (prefill repeated), p50 / mean", `${f1(med(regretted.map((r) => uncached(r, r.d.chosen) - uncached(r, r.cb))))} / ${f1(mean(regretted.map((r) => uncached(r, r.d.chosen) - uncached(r, r.cb))))}`);
line("capped pick had more of the prompt cached (≥ 1 block)", `${regretted.filter((r) => uncached(r, r.d.chosen) - uncached(r, r.cb) >= 16).length} of ${regretted.length}`);
line("Δ engine waiting (queue), p50 / mean", `${f1(med(regretted.map((r) => x(r, r.d.chosen).waiting - x(r, r.cb).waiting)))} / ${f1(mean(regretted.map((r) => x(r, r.d.chosen).waiting - x(r, r.cb).waiting)))}`);
line("Δ our in flight (leases), p50 / mean", `${f1(med(regretted.map((r) => x(r, r.d.chosen).ours - x(r, r.cb).ours)))} / ${f1(mean(regretted.map((r) => x(r, r.d.chosen).ours - x(r, r.cb).ours)))}`);
line("Δ engine decoding, p50 / mean", `${f1(med(regretted.map((r) => x(r, r.d.chosen).decoding - x(r, r.cb).decoding)))} / ${f1(mean(regretted.map((r) => x(r, r.d.chosen).decoding - x(r, r.cb).decoding)))}`);
const cand = regretted.filter((r) => x(r, r.cb).candidate);
line("capped pick was a cost-model candidate", `${cand.length} of ${regretted.length}`);
const dTerm = (k: "cost" | "queueWait" | "start" | "prefill" | "kv" | "inflightTerm") =>
  `${f1(med(cand.map((r) => x(r, r.d.chosen)[k] - x(r, r.cb)[k])))} / ${f1(mean(cand.map((r) => x(r, r.d.chosen)[k] - x(r, r.cb)[k])))}`;
for (const k of ["cost", "queueWait", "start", "prefill", "kv", "inflightTerm"] as const) line(`predicted Δ ${k} (chosen − capped pick), p50 / mean ms`, dTerm(k));
line("predicted Δ queue wait = 0 where the chosen step carried a prefill", `${stepPrefill.filter((r) => x(r, r.d.chosen).queueWait - x(r, r.cb).queueWait === 0).length} of ${stepPrefill.length}`);
// What a better gateway-legal score would gain on our tail: the capped pick's Δ explained by observable differences.
const residual = regretted.map((r) => r.delta - dStep(r));
line("Δ minus Δ step in progress, p50 / mean (what is left for queue + prefill, gateway-legal)", `${f1(med(residual))} / ${f1(mean(residual))} ms`);

console.log(`\n## The capped clairvoyant's slowest 1% (${cvRows.length} requests)\n`);
console.log("| quantity | value |\n|---|---|");
line("its TTFT p50 / ours for the same requests p50", `${f1(med(cvRows.map((r) => r.cv)))} / ${f1(med(cvRows.map((r) => r.ours)))} ms`);
line("also in our slowest 1%", `${cvRows.filter((r) => r.oursTail).length} of ${cvRows.length}`);
line("at our decision for them: Δ (ours − capped pick) p50 / mean", `${f1(med(cvRows.map((r) => r.oursRegret)))} / ${f1(mean(cvRows.map((r) => r.oursRegret)))} ms`);
line("  share of that Δ in the step in progress (where Δ > 0), mean", pc(mean(cvRows.filter((r) => r.oursRegret > 0).map((r) => r.stepShare))));

// ---------------------------------------------------------------------------------------------------------
// The one gateway-legal signal the tail points at: a prefill we sent whose first token has not streamed back.
// A gateway that proxies the stream sees its first bytes (Dynamo's router acts on them: sim/policies.ts
// firstToken); the RouterDO today hears only completions. Per decision and backend: our requests sent there
// with no first token yet, and the virtual queue corrected by them: each pending prefill ends at its predicted
// end (start + prefill as charged at its own decision) plus the mean overrun of predicted ends learned from
// the first tokens already seen (causal: only those before this decision). A rescoring on our trajectory.
if (process.env.PENDING !== "0") {
  console.log("\n## A pending first token: which engine is mid-prefill, as a gateway proxying the stream sees it\n");
  console.log("| seed | decisions | chosen had a pending first token | … where the ledger's queue said 0 | learned overrun (end of run) | rescored mean regret vs capped pick: as charged (argmin cost within the 1.25 cap) → pending-corrected (within the cap) → + step in progress (bound) | our slowest 1%: as charged → pending-corrected |");
  console.log("|---|---|---|---|---|---|---|");
  for (const seed of seedsS.split(",").map(Number)) {
    const { w, fleet } = await loadAuditRun({ spec: "zipf", backends: 8, load: Number(loadS), set, seed, preset });
    const ds = collectDecisions(w, fleet).decisions;
    const n = ds.length;
    const firstAt = ds.map((d) => d.now + d.realized);
    const predictedEnd = ds.map((d) => d.now + d.at[d.chosen]!.start + d.at[d.chosen]!.prefill);
    const byFirst = [...ds.keys()].sort((a, b) => firstAt[a]! - firstAt[b]!);
    let k = 0;
    let overSum = 0;
    let overN = 0;
    const open = new Set<number>();
    let pendChosen = 0;
    let pendZero = 0;
    const tailFrom = quantileOf(ds.map((d) => d.realized), 0.99);
    const score = { chargedCap: [] as number[], charged: [] as number[], corrected: [] as number[], bound: [] as number[], tailCharged: [] as number[], tailCorrected: [] as number[] };
    for (let i = 0; i < n; i++) {
      const d = ds[i]!;
      while (k < n && firstAt[byFirst[k]!]! <= d.now) {
        const j = byFirst[k++]!;
        if (j < i) {
          overSum += firstAt[j]! - predictedEnd[j]!;
          overN++;
          open.delete(j);
        }
      }
      const over = overN > 0 ? overSum / overN : 0;
      const pendEnd = new Array(d.at.length).fill(d.now);
      const pending = new Array(d.at.length).fill(0);
      for (const j of open) {
        if (firstAt[j]! <= d.now) continue;
        const b = ds[j]!.chosen;
        pending[b]++;
        pendEnd[b] = Math.max(pendEnd[b], predictedEnd[j]! + over);
      }
      if (pending[d.chosen] > 0) {
        pendChosen++;
        if (d.at[d.chosen]!.queueWait === 0) pendZero++;
      }
      const cb = cappedBest(d);
      const total = d.at.reduce((a, x) => a + x.ours, 0);
      const cap = boundedCap(1, d.at.length, total, C);
      const pick = (f: (b: number) => number) => {
        let best = -1;
        for (let b = 0; b < d.at.length; b++) {
          const x = d.at[b]!;
          if (!x.candidate || x.ours >= cap) continue;
          if (best < 0 || f(b) < f(best)) best = b;
        }
        return best < 0 ? d.chosen : best;
      };
      const reg = (b: number) => d.at[b]!.ttft - d.at[cb]!.ttft;
      const corrected = (b: number) => {
        const x = d.at[b]!;
        const q = Math.max(x.queueWait, pendEnd[b] - d.now);
        return x.cost - x.start + Math.max(x.start, q);
      };
      score.charged.push(reg(d.chosen));
      score.chargedCap.push(reg(pick((b) => d.at[b]!.cost)));
      score.corrected.push(reg(pick(corrected)));
      score.bound.push(reg(pick((b) => d.at[b]!.cost + d.at[b]!.stepWait)));
      if (d.realized >= tailFrom) {
        score.tailCharged.push(reg(d.chosen));
        score.tailCorrected.push(reg(pick(corrected)));
      }
      open.add(i);
    }
    console.log(
      `| ${seed} | ${n} | ${pc(pendChosen / n)} | ${pc(pendZero / Math.max(1, pendChosen))} | ${f1(overN > 0 ? overSum / overN : 0)} ms | ${f1(mean(score.charged))} (${f1(mean(score.chargedCap))}) → ${f1(mean(score.corrected))} → ${f1(mean(score.bound))} ms | ${f1(mean(score.tailCharged))} → ${f1(mean(score.tailCorrected))} ms |`,
    );
  }
}
