// Does the in-flight cost prefix_aware learns (src/routing/inflight-step-cost.ts) converge near what one more
// running request really adds to an engine step in the simulator's engine model? One run of the tuning set,
// prefix_aware only. At every routing decision it reads each engine's decode batch (d sequences holding C
// tokens of context) and takes the true marginal step cost from the engine's own step-time code,
//   stepMs(d + 1, C + C/d, 0) − stepMs(d, C, 0)
// (one more sequence of the mean context; for the MoE the experts its token adds), averaged over the
// decisions where the engine was decoding. It prints, at tenths of the run, the learned figure (one estimate
// for the pool, per unit of weight: the same on every backend of equal weight; the 2 ms constant shown until
// it is learned) against that truth, and how many completions each backend had seen when it was learned and
// when it first came within a factor 2 of the run's truth. The policy charges the constant, as shipped
// (APPLY learned-cost.patch to audit the variant that charges the learned figure).
//   npx tsx bench/results/inflight-cost/audit.ts [WORKLOAD BACKENDS LOAD SET SEED PRESET]
// Engine internals are read through casts: an audit only, nothing here is used by the router or the simulator.
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router, type RouteTicket } from "../../../src/routing/router";
import { StepCost } from "../../../sim/model/step-time";
import { GATEWAY_VIEW } from "../../../sim/request-view";
import { engineConfig, simulatePolicy } from "../../../sim/simulator";
import { loadAuditRunFromArgv } from "../audit-run";

const a = await loadAuditRunFromArgv({
  spec: "generated-shared-prefix",
  backends: 8,
  load: 45,
  set: "tuning",
  seed: 1,
  preset: "qwen3-30b-a3b-h100-vllm",
});
const { w, fleet } = a;
const n = w.requests.length;
const steps = new StepCost(engineConfig(fleet, w.blockTokens));
const policy = new PrefixAwarePolicy();
const model = policy.model;

interface Inside {
  batch: { size: number; context(step: number): number };
  step: number;
  metrics(now: number): unknown;
}
let trueSum = 0;
let trueCount = 0;
let batchSum = 0;
const rows: string[] = [];
const completions = new Int32Array(a.backends);
/** Per backend, its figure after each of its completions (NaN while on the prior). */
const series: number[][] = Array.from({ length: a.backends }, () => []);
let done = 0;
const fmt = (x: number) => x.toFixed(3);

function checkpoint(label: string): void {
  const ms = Array.from({ length: a.backends }, (_, b) => model.learnedInflightMs(b) ?? model.decodeMsPerInflight);
  const learned = model.learnedInflightMs(0) !== undefined ? "yes" : "no (the constant shown)";
  const mean = ms.reduce((s, x) => s + x, 0) / ms.length;
  rows.push(
    `| ${label} | ${learned} | ${fmt(mean)} | ${fmt(Math.min(...ms))} | ${fmt(Math.max(...ms))} | ${trueCount > 0 ? fmt(trueSum / trueCount) : "—"} | ${trueCount > 0 ? (batchSum / trueCount).toFixed(1) : "—"} |`,
  );
}

const res = simulatePolicy(
  w,
  fleet,
  "prefix_aware",
  (specs) => {
    const r = new Router(specs, { policy, blockTokens: w.blockTokens });
    const index = new Map(specs.map((s, i) => [s.id, i]));
    const at = new Map<unknown, number>();
    return {
      route(req, ctx) {
        const out = r.route(req, ctx);
        at.set(out.ticket, index.get(out.decision.backendId)!);
        return out;
      },
      complete(ticket, outcome, ctx) {
        r.complete(ticket as RouteTicket, outcome, ctx);
        const b = at.get(ticket)!;
        at.delete(ticket);
        completions[b]!++;
        series[b]!.push(model.learnedInflightMs(b) ?? Number.NaN);
        done++;
        if (done % Math.max(1, Math.floor(n / 10)) === 0) checkpoint(`${Math.round((100 * done) / n)}%`);
      },
    };
  },
  GATEWAY_VIEW,
  undefined,
  {
    routed(i, _b, _d, engines) {
      const now = w.requests[i]!.arrivalMs;
      for (const e of engines) {
        const x = e as unknown as Inside;
        x.metrics(now);
        const d = x.batch.size;
        if (d === 0) continue;
        const c = x.batch.context(x.step);
        trueSum += steps.stepMs(d + 1, c + c / d, 0) - steps.stepMs(d, c, 0);
        batchSum += d;
        trueCount++;
      }
    },
  },
);
if (done % Math.max(1, Math.floor(n / 10)) !== 0) checkpoint("end");
const truth = trueSum / Math.max(1, trueCount);
const fin = Array.from({ length: a.backends }, (_, b) => model.learnedInflightMs(b) ?? Number.NaN);
const within2 = fin.filter((x) => x >= truth / 2 && x <= truth * 2).length;
const firstLearned = series.map((xs) => xs.findIndex((x) => !Number.isNaN(x)) + 1);
const firstNear = series.map((xs) => xs.findIndex((x) => x >= truth / 2 && x <= truth * 2) + 1);
const range = (xs: number[]) => (xs.some((x) => x === 0) ? `never on ${xs.filter((x) => x === 0).length}` : `${Math.min(...xs)}–${Math.max(...xs)}`);

console.log(`# In-flight cost: learned against the engine model — ${a.spec}, ${a.backends} backends, load ${a.load}, ${a.set} s${a.seed}, ${a.preset}\n`);
const env = `${a.spec === "mooncake" ? "MOONCAKE_TRACE=/work/shared/traces/mooncake_conversation.jsonl " : ""}${a.requests !== undefined ? `REQUESTS=${a.requests} ` : ""}`;
console.log(`Command: \`${env}npx tsx bench/results/inflight-cost/audit.ts ${a.spec} ${a.backends} ${a.load} ${a.set} ${a.seed} ${a.preset}\`\n`);
console.log(`${n} requests; prefix_aware TTFT p50 ${res.ttftP50Ms.toFixed(1)} ms, p99 ${res.ttftP99Ms.toFixed(1)} ms; the cost charges the constant, ${model.decodeMsPerInflight} ms.\n`);
console.log("| completed | learned | learned ms/request (mean) | min | max | true marginal step ms (run so far) | mean decode batch |");
console.log("|---|---|---|---|---|---|---|");
for (const r of rows) console.log(r);
console.log(`\nTrue marginal over the run ${fmt(truth)} ms. At the end ${within2}/${a.backends} backends within a factor 2 of it.`);
console.log(`Completions per backend: ${Math.min(...completions)}–${Math.max(...completions)}; before its figure was learned: ${range(firstLearned)}; before it was first within a factor 2 of the truth: ${range(firstNear)}.`);
