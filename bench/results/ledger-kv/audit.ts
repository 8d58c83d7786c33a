// How wrong the cost model's KV ledger is (src/routing/cost-model.ts: kvTokens, our in-flight requests'
// uncached prompt + past-window cached + output hint, from route to completion) against the engine model's
// true KV in use (sim/model/: blocks out of the free queue, i.e. pinned by admitted requests), per backend
// and decision, on one run of prefix_aware as bench/sim-all.sh runs it (scrape off). An audit only: it reads
// the policy's and the engines' private state through casts and changes no decision (checked: the p99
// printed equals the report's).
//   MOONCAKE_TRACE=… npx tsx bench/results/ledger-kv/audit.ts mooncake 8 2 tuning 1 qwen3-30b-a3b-h100-vllm
//
// At each decision, for every backend j (before the new request is added), the engine's E_j = U_j (blocks out
// of the free queue) + what the requests waiting in its queue will take at admission (their blocks less
// their cached prefix now: FCFS admits them before anything routed later), and ledger L_j − E_j splits
// exactly into:
//   queued:  over requests the engine has not admitted, the ledger's KV less what they will take (the
//            ledger counts a request from route time, the engine from admission);
//   output:  over admitted requests, the output the ledger counted (max_tokens as sent, 0 when absent) less
//            the true answer the engine reserved (the engine model reserves prompt + answer at admission);
//   history: over admitted requests, the prompt the ledger counted (uncached as expected + cached past the
//            key window) less the prompt as the gateway sees it: the cached history the ledger leaves out;
//   estimate: over admitted requests, the prompt length as the gateway sees it (exact within its key
//            window, estimated from the text past it) less the true length the engine pins;
//   shared:  Σ admitted (prompt + answer) − U: blocks shared by several admitted requests, counted once by
//            the engine, and block rounding.
// Then the decisions: does the chosen backend admit the request's memory now by the ledger (L + its KV ≤
// capacity) and by the engine (its blocks less its cached prefix fit the free queue after those waiting
// ahead)? And the slowest 1% (TTFT ≥ p99), one line each, at their own decision.
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import type { RouteRequest } from "../../../src/routing/types";
import { viewOf } from "../../../sim/policies";
import { simulatePolicy } from "../../../sim/simulator";
import type { EngineReq as EngReq } from "../../../sim/model/scheduler";
import { loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING, withTtft } from "../audit-run";

const { spec, backends, load, set, seed, preset, w, fleet } = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
const bt = w.blockTokens;
const n = w.requests.length;
const cap = fleet.kvCacheTokens;

interface Eng {
  metrics(now: number): unknown;
  pool: { numFree: number; numBlocks: number; longestPrefix(keys: readonly number[]): number };
  byId: Map<string, EngReq>;
  scheduler: { waiting: EngReq[]; waitHead: number; waitingCount: number };
}

const policy = new PrefixAwarePolicy();
const inside = policy as unknown as { memoryWaits: Float64Array };
/** Per request: the ledger's KV for it (its slot), the output hint in it. */
const ledgerKv = new Float64Array(n);
const hint = new Float64Array(n);
/** Per request: its prompt length as the gateway sees it (RouteRequest.promptTokens). */
const seenPrompt = new Float64Array(n);
let k = 0;
let picks = 0;
let lastReq: RouteRequest | undefined;
let lastWaits = new Float64Array(0);
const pick = policy.pick.bind(policy);
policy.pick = (req, f, ctx) => {
  const r = pick(req, f, ctx);
  lastReq = req;
  picks++;
  lastWaits = inside.memoryWaits.slice();
  return r;
};
const routed = policy.model.routed.bind(policy.model);
policy.model.routed = (...a: Parameters<typeof routed>) => {
  const slot = routed(...a);
  // The memory wait's own count: a slot's memTokens where a variant keeps one (ledger-kv/whole-prompt.patch).
  ledgerKv[k] = (slot as { memTokens?: number }).memTokens ?? slot.kvTokens;
  if (picks !== k + 1) throw new Error(`request ${k}: routed without its own pick`);
  hint[k] = lastReq?.outputTokens ?? 0;
  seenPrompt[k] = lastReq?.promptTokens ?? 0;
  k++;
  return slot;
};

type Parts = {
  L: number;
  U: number;
  E: number;
  waiting: number;
  output: number;
  history: number;
  estimate: number;
  shared: number;
};
/** Samples over every (decision, backend) past the first tenth of the run. */
const samples: Parts[] = [];
interface Decision {
  chosen: number;
  parts: Parts;
  /** By the ledger's count: its KV held + this request's ≤ capacity. */
  ledgerFits: boolean;
  /** The policy's memory wait for it there (cost-model.ts; 0 for a backend outside the candidates). */
  policyWait: number;
  engineFits: boolean;
  /** The engine's memory admits it after those waiting ahead of it (FCFS), leaving the prefill queue aside. */
  engineMemFits: boolean;
  engineWaiting: number;
  engineWaitingNeed: number;
  /** The request heading the chosen engine's waiting queue at the decision, −1 if none. */
  head: number;
  need: number;
  prompt: number;
}
const decisions: (Decision | undefined)[] = new Array(n);

function partsOf(e: Eng, j: number, now: number): Parts {
  e.metrics(now);
  const U = (e.pool.numBlocks - e.pool.numFree) * bt;
  let L = 0;
  let waiting = 0;
  let output = 0;
  let history = 0;
  let estimate = 0;
  let held = 0;
  let queued = 0;
  for (const r of e.byId.values()) {
    if (r.phase === "gone") continue;
    const id = Number(r.id);
    L += ledgerKv[id]!;
    if (r.phase === "waiting") {
      // What it will take at admission (FCFS: before anything routed later): its blocks less its cached prefix now.
      const need = (Math.ceil((r.promptTokens + r.outputTokens) / bt) - e.pool.longestPrefix(r.blocks)) * bt;
      queued += need;
      waiting += ledgerKv[id]! - need;
      continue;
    }
    output += hint[id]! - r.outputTokens;
    history += ledgerKv[id]! - hint[id]! - seenPrompt[id]!;
    estimate += seenPrompt[id]! - r.promptTokens;
    held += r.promptTokens + r.outputTokens;
  }
  void j;
  return { L, U, E: U + queued, waiting, output, history, estimate, shared: held - U };
}

const ttft = new Float64Array(n).fill(Number.NaN);
let checkL = 0;
const res = simulatePolicy(
  w,
  fleet,
  "prefix_aware",
  withTtft((specs) => new Router(specs, { policy, blockTokens: bt }), ttft),
  viewOf("prefix_aware"),
  undefined,
  {
    routed(i, chosen, _d, engines) {
      const now = w.requests[i]!.arrivalMs;
      const es = engines as unknown as Eng[];
      for (let j = 0; j < es.length; j++) {
        const p = partsOf(es[j]!, j, now);
        // The ledger's own count, less the new request on the chosen one, must equal ours (every slot is in an engine).
        const open = policy.model.openSlots(j);
        let own = 0;
        for (const slot of open) own += (slot as { memTokens?: number }).memTokens ?? slot.kvTokens;
        if (j === chosen) own -= ledgerKv[i]!;
        if (Math.abs(own - p.L) > 1e-6) checkL++;
        if (i >= n / 10) samples.push(p);
        if (j !== chosen) continue;
        const e = es[j]!;
        const r = w.requests[i]!;
        const need = Math.ceil((r.promptTokens + Math.max(1, r.outputTokens)) / bt) - e.pool.longestPrefix(w.promptBlocks[i]!);
        const q = e.scheduler;
        let ahead = 0;
        for (let h = q.waitHead; h < q.waiting.length; h++) {
          const x = q.waiting[h]!;
          ahead += Math.ceil((x.promptTokens + x.outputTokens) / bt) - e.pool.longestPrefix(x.blocks);
        }
        decisions[i] = {
          engineMemFits: need + ahead <= e.pool.numFree,
          engineWaitingNeed: ahead * bt,
          chosen,
          parts: p,
          ledgerFits: p.L + ledgerKv[i]! <= cap,
          policyWait: lastWaits[j]!,
          engineFits: q.waitingCount === 0 && need <= e.pool.numFree,
          engineWaiting: q.waitingCount,
          head: q.waitingCount > 0 ? Number(q.waiting[q.waitHead]!.id) : -1,
          need: need * bt,
          prompt: r.promptTokens,
        };
      }
    },
  },
);

const qs = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};
const k0 = (x: number) => `${(x / 1000).toFixed(1)}k`;
const row = (label: string, ss: Parts[]) => {
  const f = (key: keyof Parts) =>
    `${k0(ss.reduce((a, s) => a + s[key], 0) / Math.max(1, ss.length))} [${k0(qs(ss.map((s) => s[key]), 0.1))}, ${k0(qs(ss.map((s) => s[key]), 0.5))}, ${k0(qs(ss.map((s) => s[key]), 0.9))}]`;
  const ratio = ss.filter((s) => s.E > 0).map((s) => s.L / s.E);
  console.log(
    `| ${label} | ${ss.length} | ${f("E")} | ${f("L")} | ${qs(ratio, 0.1).toFixed(2)} / ${qs(ratio, 0.5).toFixed(2)} / ${qs(ratio, 0.9).toFixed(2)} | ${f("waiting")} | ${f("output")} | ${f("history")} | ${f("estimate")} | ${f("shared")} |`,
  );
};

const order = Array.from(ttft).filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
const p99 = order[Math.floor(0.99 * order.length)]!;
console.log(`run: ${spec} ${backends} backends, load ${load}, ${set} seed ${seed}, ${preset}; capacity ${cap} tokens per engine`);
console.log(`prefix_aware: p50 ${res.ttftP50Ms.toFixed(0)} ms, p99 ${res.ttftP99Ms.toFixed(0)} ms, hit ${(100 * res.hitRate).toFixed(1)}%; ledger check mismatches ${checkL}`);
console.log("");
console.log("Ledger L against the engine's E = U (blocks in use) + what its waiting queue takes at admission, per (decision, backend), tokens: mean [p10, median, p90]; L − E = queued + output + history + estimate + shared");
console.log("| samples | n | engine E | ledger L | L/E p10 / med / p90 | queued | output | history | estimate | shared |");
console.log("|---|---|---|---|---|---|---|---|---|---|");
row("all (past the first tenth)", samples);
row("engine E ≥ 70% of capacity", samples.filter((s) => s.E >= 0.7 * cap));
row("engine E ≥ 90% of capacity", samples.filter((s) => s.E >= 0.9 * cap));

const ds = decisions.filter((d): d is Decision => d !== undefined);
const count = (f: (d: Decision) => boolean) => ds.filter(f).length;
console.log("");
console.log(`Decisions (${ds.length}): does the chosen backend admit the request's memory now? (ledger: L + its KV ≤ capacity; engine: its free blocks after the requests waiting ahead, FCFS)`);
console.log(`- ledger yes / engine yes ${count((d) => d.ledgerFits && d.engineMemFits)}; ledger yes / engine no ${count((d) => d.ledgerFits && !d.engineMemFits)}; ledger no / engine yes ${count((d) => !d.ledgerFits && d.engineMemFits)}; both no ${count((d) => !d.ledgerFits && !d.engineMemFits)}`);
const miss = ds.filter((d) => d.ledgerFits && !d.engineMemFits);
console.log(`- ledger yes but the policy's memory wait > 0 (expected ends): ${count((d) => d.ledgerFits && d.policyWait > 0)}; ledger no and the policy's wait 0 (chosen outside the candidates, or the wait's rule): ${count((d) => !d.ledgerFits && !(d.policyWait > 0))}`);
console.log(`- ledger yes / engine no, by prompt: median ${qs(miss.map((d) => d.prompt), 0.5)}, p90 ${qs(miss.map((d) => d.prompt), 0.9)} tokens; ≥ 32k tokens: ${miss.filter((d) => d.prompt >= 32768).length} of the ${ds.filter((d) => d.prompt >= 32768).length} decisions on such prompts`);
row("ledger yes / engine no: chosen backend", miss.map((d) => d.parts));

const tail: number[] = [];
for (let i = 0; i < n; i++) if (ttft[i]! >= p99) tail.push(i);
tail.sort((a, b) => ttft[b]! - ttft[a]!);
const td = tail.map((i) => decisions[i]!).filter((d) => d !== undefined);
console.log("");
console.log(`Slowest 1% (TTFT ≥ ${p99.toFixed(0)} ms): ${tail.length} requests, prompt median ${qs(td.map((d) => d.prompt), 0.5)} tokens; at their own decision: ledger admits ${td.filter((d) => d.ledgerFits).length}, engine memory admits ${td.filter((d) => d.engineMemFits).length}, ledger yes / engine no ${td.filter((d) => d.ledgerFits && !d.engineMemFits).length}`);
row("tail: chosen backend at own decision", td.map((d) => d.parts));
const heads = new Set(td.map((d) => d.head).filter((h) => h >= 0));
console.log(`- behind a queue head at their decision: ${td.filter((d) => d.head >= 0).length} (${heads.size} distinct heads, ${[...heads].filter((h) => tail.includes(h)).length} of them in the tail themselves)`);
console.log("");
console.log("| request | TTFT ms | prompt | hint / true output | backend | ledger L + own KV | engine E + need | ledger admits | engine admits | L − E: queued / output / history / estimate / shared |");
console.log("|---|---|---|---|---|---|---|---|---|---|");
for (const i of tail) {
  const d = decisions[i]!;
  const p = d.parts;
  console.log(
    `| #${i} | ${ttft[i]!.toFixed(0)} | ${d.prompt} | ${hint[i]} / ${w.requests[i]!.outputTokens} | b${d.chosen} | ${k0(p.L + ledgerKv[i]!)} | ${k0(p.E + d.need)} | ${d.ledgerFits ? "yes" : "no"} | ${d.engineMemFits ? "yes" : "no"} | ${k0(p.waiting)} / ${k0(p.output)} / ${k0(p.history)} / ${k0(p.estimate)} / ${k0(p.shared)} |`,
  );
}
