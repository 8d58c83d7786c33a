// Who is in prefix_aware's slowest 1% on a Mooncake run, by route reason, and what its `fallback` decisions
// (no backend within its work bound: the long prompts) chose against what the engines held then. Dynamo on the
// same requests for comparison. For each fallback: the chosen engine's waiting queue and free KV against the
// request's input, whether another engine had no queue and room for the input, and the TTFTs.
//   MOONCAKE_TRACE=... npx tsx bench/results/moe16-tail/fallback-audit.ts mooncake 16 4 tuning 1 qwen3-30b-a3b-h100-vllm
// Engine internals are read through casts: an audit only, nothing here is used by the router or the simulator.
import type { EngineModel } from "../../../sim/model/engine-model";
import { routerFactory, viewOf } from "../../../sim/policies";
import { simulatePolicy } from "../../../sim/simulator";
import { type EngineInside, loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING, quantileOf } from "../audit-run";

const run = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
const { w, fleet } = run;
const bt = w.blockTokens;
const n = w.requests.length;

interface At {
  waiting: number;
  waitingTokens: number;
  free: number;
  needInput: number;
}
function at(e: EngineModel, i: number, now: number): At {
  e.metrics(now);
  const x = e as unknown as EngineInside;
  const s = x.scheduler;
  const queue = s.waiting.slice(s.waitHead);
  const cached = x.pool.longestPrefix(w.promptBlocks[i]!);
  return {
    waiting: queue.length,
    waitingTokens: queue.reduce((a, q) => a + q.promptTokens, 0),
    free: x.pool.numFree * bt,
    needInput: (Math.ceil(w.requests[i]!.promptTokens / bt) - cached) * bt,
  };
}
const startsNow = (a: At) => a.waiting === 0 && a.needInput <= a.free;

function simulate(policy: "prefix_aware" | "dynamo") {
  const reason: string[] = new Array(n);
  const chosen: At[] = new Array(n);
  const others: At[][] = new Array(n);
  const backend = new Int32Array(n);
  const ttft = new Float64Array(n).fill(Number.NaN);
  const res = simulatePolicy(w, fleet, policy, routerFactory(policy, bt), viewOf(policy), undefined, {
    routed(i, b, d, engines) {
      const now = w.requests[i]!.arrivalMs;
      const all = engines.map((e) => at(e, i, now));
      reason[i] = d.reason;
      backend[i] = b;
      chosen[i] = all[b]!;
      others[i] = all.filter((_, j) => j !== b);
    },
    done(i, _b, _c, t) {
      ttft[i] = t;
    },
  });
  return { reason, chosen, others, backend, ttft, res };
}

const pa = simulate("prefix_aware");
const dy = simulate("dynamo");
const s = (x: number) => `${(x / 1000).toFixed(2)} s`;
const k = (x: number) => `${(x / 1000).toFixed(1)}k`;
const pct = (p: number, xs: number[]) => quantileOf(xs, p / 100);
const share = (xs: boolean[]) => `${((100 * xs.filter(Boolean).length) / Math.max(1, xs.length)).toFixed(0)}%`;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

console.log(
  `${run.spec} ${run.set} seed ${run.seed}, ${n} requests, ${run.backends} backends ×${run.load}, ${run.preset}`,
);
console.log(
  `prefix_aware p99 ${s(pa.res.ttftP99Ms)}, dynamo p99 ${s(dy.res.ttftP99Ms)}; preemptions ${pa.res.preemptions ?? "?"} / ${dy.res.preemptions ?? "?"}`,
);
const tail = (r: typeof pa) =>
  [...Array(n).keys()].sort((a, b) => r.ttft[b]! - r.ttft[a]!).slice(0, Math.ceil(n / 100));
for (const [name, r, o] of [
  ["prefix_aware", pa, dy],
  ["dynamo", dy, pa],
] as const) {
  const t = tail(r);
  const by = new Map<string, number>();
  for (const i of t) by.set(r.reason[i]!, (by.get(r.reason[i]!) ?? 0) + 1);
  console.log(
    `\n${name}'s slowest 1% (${t.length}, TTFT ≥ ${s(r.ttft[t[t.length - 1]!]!)}): by reason ${[...by].map(([a, c]) => `${a} ${c}`).join(", ")}; ` +
      `prompt p10/p50 ${k(pct(10, t.map((i) => w.requests[i]!.promptTokens)))} / ${k(pct(50, t.map((i) => w.requests[i]!.promptTokens)))}; ` +
      `chosen could not start at once ${share(t.map((i) => !startsNow(r.chosen[i]!)))}, while another could ${share(t.map((i) => !startsNow(r.chosen[i]!) && r.others[i]!.some(startsNow)))}; ` +
      `mean TTFT ${s(mean(t.map((i) => r.ttft[i]!)))} (the other router on them ${s(mean(t.map((i) => o.ttft[i]!)))})`,
  );
}

const fb = [...Array(n).keys()].filter((i) => pa.reason[i] === "fallback");
console.log(`\n== prefix_aware's fallbacks: ${fb.length} of ${n}`);
console.log(
  `prompt p10/p50/p90 ${k(pct(10, fb.map((i) => w.requests[i]!.promptTokens)))} / ${k(pct(50, fb.map((i) => w.requests[i]!.promptTokens)))} / ${k(pct(90, fb.map((i) => w.requests[i]!.promptTokens)))}; ` +
    `in prefix_aware's slowest 1%: ${fb.filter((i) => tail(pa).includes(i)).length}`,
);
const noStart = fb.filter((i) => !startsNow(pa.chosen[i]!));
console.log(
  `chosen engine could not start it at once: ${noStart.length} (queue ahead ${noStart.filter((i) => pa.chosen[i]!.waiting > 0).length}, input over free KV ${noStart.filter((i) => pa.chosen[i]!.needInput > pa.chosen[i]!.free).length}); ` +
    `of those, another engine could: ${noStart.filter((i) => pa.others[i]!.some(startsNow)).length}`,
);
console.log(
  `TTFT on the fallbacks: prefix_aware mean ${s(mean(fb.map((i) => pa.ttft[i]!)))} p50 ${s(pct(50, fb.map((i) => pa.ttft[i]!)))} p90 ${s(pct(90, fb.map((i) => pa.ttft[i]!)))}; ` +
    `dynamo on the same requests mean ${s(mean(fb.map((i) => dy.ttft[i]!)))} p50 ${s(pct(50, fb.map((i) => dy.ttft[i]!)))} p90 ${s(pct(90, fb.map((i) => dy.ttft[i]!)))}; ` +
    `dynamo's chosen engine could not start them at once: ${fb.filter((i) => !startsNow(dy.chosen[i]!)).length}`,
);
const show = Number(process.env.SHOW ?? 20);
console.log(`\nthe fallbacks, slowest first (TTFT, dynamo's; prompt; chosen: waiting (tokens), free vs input need; best other that starts now)`);
for (const i of [...fb].sort((a, b) => pa.ttft[b]! - pa.ttft[a]!).slice(0, show)) {
  const c = pa.chosen[i]!;
  const d = dy.chosen[i]!;
  console.log(
    `#${i} ${s(pa.ttft[i]!)} (${s(dy.ttft[i]!)}) prompt ${k(w.requests[i]!.promptTokens)} | b${pa.backend[i]} waiting ${c.waiting} (${k(c.waitingTokens)}) free ${k(c.free)} need ${k(c.needInput)} | ` +
      `others starting now ${pa.others[i]!.filter(startsNow).length} | dynamo b${dy.backend[i]} waiting ${d.waiting} (${k(d.waitingTokens)}) free ${k(d.free)}`,
  );
}
