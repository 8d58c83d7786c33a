// Long prompts and free holes: when a prompt of ≥ 65k tokens arrives on Mooncake MoE, is there an engine
// with room for it, and is its own wait what puts a policy's p99 where it is? One run of prefix_aware and one
// of Dynamo as bench/sim-all.sh runs them (scrape off for ours, live readings for Dynamo's), replayed with the
// engine model's state read at each decision through casts. An audit only: it changes no decision (the p99s it
// prints equal the reports').
//   MOONCAKE_TRACE=… npx tsx bench/results/kv-packing/holes.ts mooncake 8 2 tuning 1 qwen3-30b-a3b-h100-vllm
//
// Per long prompt (true prompt ≥ LONG tokens):
//   wait:       its admission on the engine (the scheduler pins its blocks) − its arrival, ms;
//   true hole:  at its arrival, per engine, the free blocks (the free queue: cached blocks nobody pins count
//               as free, as in vLLM's BlockPool) less what the engine's waiting queue will take when admitted
//               (FCFS, ahead of anything routed now); the fleet's largest, and whether any engine's hole
//               holds this request's need there (prompt + true answer, less its cached prefix on that engine);
//   ledger hole: prefix_aware only, capacity − the cost model's KV ledger (cost-model.ts), the fleet's largest,
//               and whether any holds the ledger's own count for this request.
// Then the split of each policy's slowest 1% (TTFT ≥ p99) into long prompts and short ones, and of the short
// ones, how many were routed to an engine whose waiting queue then held a long prompt.
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import { routerFactory, viewOf } from "../../../sim/policies";
import { simulatePolicy, type RouterFactory } from "../../../sim/simulator";
import type { EngineReq as EngReq } from "../../../sim/model/scheduler";
import { loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING, withTtft } from "../audit-run";

const LONG = 65536;
const { spec, backends, load, set, seed, preset, w, fleet } = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
const bt = w.blockTokens;
const n = w.requests.length;
const cap = fleet.kvCacheTokens;

interface Sched {
  waiting: EngReq[];
  waitHead: number;
  admit(r: EngReq): boolean;
}
interface Eng {
  t: number;
  metrics(now: number): unknown;
  pool: { numFree: number; numBlocks: number; longestPrefix(keys: readonly number[]): number };
  scheduler: Sched;
}

interface Run {
  name: string;
  ttft: Float64Array;
  admitAt: Float64Array;
  trueHole: Float64Array;
  trueFits: Uint8Array;
  ledgerHole: Float64Array;
  ledgerFits: Uint8Array;
  /** Short prompt routed to an engine whose waiting queue held a long prompt at the decision. */
  behindLong: Uint8Array;
  /** Short prompt whose own blocks (after the waiting queue's) did not fit the chosen engine's free KV at the decision. */
  shortNoRoom: Uint8Array;
  /** Short prompt routed to an engine with requests waiting at the decision. */
  behindAny: Uint8Array;
  /** Short prompt: the chosen engine's shortfall for it at the decision, tokens (its need + the waiting queue's − free). */
  shortfall: Float64Array;
  /** Short prompt, prefix_aware only: the ledger admitted it on the chosen backend (L + own ≤ capacity). */
  ledgerAdmits: Uint8Array;
  p99: number;
  hit: number;
}

function replay(name: "prefix_aware" | "dynamo"): Run {
  const run: Run = {
    name,
    ttft: new Float64Array(n).fill(Number.NaN),
    admitAt: new Float64Array(n).fill(Number.NaN),
    trueHole: new Float64Array(n).fill(Number.NaN),
    trueFits: new Uint8Array(n),
    ledgerHole: new Float64Array(n).fill(Number.NaN),
    ledgerFits: new Uint8Array(n),
    behindLong: new Uint8Array(n),
    shortNoRoom: new Uint8Array(n),
    behindAny: new Uint8Array(n),
    shortfall: new Float64Array(n),
    ledgerAdmits: new Uint8Array(n),
    p99: 0,
    hit: 0,
  };
  let policy: PrefixAwarePolicy | undefined;
  let make: RouterFactory;
  /** The ledger's KV for the request being routed (its slot), prefix_aware only. */
  let ownKv = Number.NaN;
  if (name === "prefix_aware") {
    const p = new PrefixAwarePolicy();
    policy = p;
    const routed = p.model.routed.bind(p.model);
    p.model.routed = (...a: Parameters<typeof routed>) => {
      const slot = routed(...a);
      ownKv = slot.kvTokens;
      return slot;
    };
    make = (specs) => new Router(specs, { policy: p, blockTokens: bt });
  } else make = routerFactory(name, bt);
  let patched = false;
  const res = simulatePolicy(w, fleet, name, withTtft(make, run.ttft), viewOf(name), undefined, {
    routed(i, chosen, _d, engines) {
      const es = engines as unknown as Eng[];
      if (!patched) {
        // Record each request's admission time: the scheduler admits at the engine's current step boundary.
        for (const e of es) {
          const admit = e.scheduler.admit.bind(e.scheduler);
          e.scheduler.admit = (r: EngReq) => {
            const ok = admit(r);
            if (ok) run.admitAt[Number(r.id)] = e.t;
            return ok;
          };
        }
        patched = true;
      }
      const r = w.requests[i]!;
      const now = r.arrivalMs;
      const long = r.promptTokens >= LONG;
      if (!long) {
        const e = es[chosen]!;
        e.metrics(now);
        const q = e.scheduler;
        let ahead = 0;
        for (let h = q.waitHead; h < q.waiting.length; h++) {
          const x = q.waiting[h]!;
          run.behindAny[i] = 1;
          if (x.promptTokens >= LONG) run.behindLong[i] = 1;
          ahead += Math.ceil((x.promptTokens + x.outputTokens) / bt) - e.pool.longestPrefix(x.blocks);
        }
        const need = Math.ceil((r.promptTokens + Math.max(1, r.outputTokens)) / bt) - e.pool.longestPrefix(w.promptBlocks[i]!);
        if (need + ahead > e.pool.numFree) run.shortNoRoom[i] = 1;
        run.shortfall[i] = (need + ahead - e.pool.numFree) * bt;
        if (policy !== undefined) {
          let held = 0;
          for (const slot of policy.model.openSlots(chosen)) held += slot.kvTokens;
          run.ledgerAdmits[i] = held <= cap ? 1 : 0; // held includes the new request's own slot
        }
        return;
      }
      let best = -1;
      let fits = 0;
      for (const e of es) {
        e.metrics(now);
        const q = e.scheduler;
        let ahead = 0;
        for (let h = q.waitHead; h < q.waiting.length; h++) {
          const x = q.waiting[h]!;
          ahead += Math.ceil((x.promptTokens + x.outputTokens) / bt) - e.pool.longestPrefix(x.blocks);
        }
        const hole = (e.pool.numFree - ahead) * bt;
        best = Math.max(best, hole);
        const need = (Math.ceil((r.promptTokens + Math.max(1, r.outputTokens)) / bt) - e.pool.longestPrefix(w.promptBlocks[i]!)) * bt;
        if (need <= hole) fits = 1;
      }
      run.trueHole[i] = best;
      run.trueFits[i] = fits;
      if (policy !== undefined) {
        let lbest = Number.NEGATIVE_INFINITY;
        for (let j = 0; j < es.length; j++) {
          let held = 0;
          for (const slot of policy.model.openSlots(j)) held += slot.kvTokens;
          if (j === chosen) held -= ownKv; // the new request is already in the ledger
          lbest = Math.max(lbest, cap - held);
        }
        run.ledgerHole[i] = lbest;
        run.ledgerFits[i] = lbest >= ownKv ? 1 : 0;
      }
    },
  });
  run.p99 = res.ttftP99Ms;
  run.hit = res.hitRate;
  return run;
}

const qs = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};
const ms = (x: number) => x.toFixed(0);
const k0 = (x: number) => `${(x / 1000).toFixed(1)}k`;

const runs = [replay("prefix_aware"), replay("dynamo")];
const longIds: number[] = [];
for (let i = 0; i < n; i++) if (w.requests[i]!.promptTokens >= LONG) longIds.push(i);

console.log(`run: ${spec} ${backends} backends, load ${load}, ${set} seed ${seed}, ${preset}; capacity ${cap} tokens per engine; ${n} requests, ${longIds.length} with a prompt ≥ ${LONG} tokens`);
console.log("");
console.log("Long prompts (≥ 64k tokens): wait = admission − arrival (ms); hole = the fleet's largest free KV at arrival (true: free blocks less the waiting queue's take; ledger: capacity − the cost model's KV)");
console.log("| policy | p99 all | hit | wait p50 / p90 / p99 / max | wait > 1 s | true hole median | some engine holds it (true) | ledger hole median | some engine holds it (ledger) |");
console.log("|---|---|---|---|---|---|---|---|---|");
for (const r of runs) {
  const waits = longIds.map((i) => r.admitAt[i]! - w.requests[i]!.arrivalMs);
  const fitsT = longIds.filter((i) => r.trueFits[i]).length;
  const lh = longIds.map((i) => r.ledgerHole[i]!).filter((x) => !Number.isNaN(x));
  const fitsL = longIds.filter((i) => r.ledgerFits[i]).length;
  console.log(
    `| ${r.name} | ${ms(r.p99)} | ${(100 * r.hit).toFixed(1)}% | ${ms(qs(waits, 0.5))} / ${ms(qs(waits, 0.9))} / ${ms(qs(waits, 0.99))} / ${ms(qs(waits, 1))} | ${waits.filter((x) => x > 1000).length} | ${k0(qs(longIds.map((i) => r.trueHole[i]!), 0.5))} | ${fitsT} of ${longIds.length} | ${lh.length > 0 ? k0(qs(lh, 0.5)) : "n/a"} | ${lh.length > 0 ? `${fitsL} of ${longIds.length}` : "n/a"} |`,
  );
}
console.log("");
console.log("Long prompts' wait by whether some engine had room at arrival (true state): n, wait p50 / p90 (ms)");
for (const r of runs) {
  const part = (fit: number) => {
    const ws = longIds.filter((i) => r.trueFits[i] === fit).map((i) => r.admitAt[i]! - w.requests[i]!.arrivalMs);
    return `${ws.length}, ${ms(qs(ws, 0.5))} / ${ms(qs(ws, 0.9))}`;
  };
  console.log(`- ${r.name}: room somewhere ${part(1)}; no room anywhere ${part(0)}`);
}
console.log("");
console.log("TTFT by prompt size (ms): p50 / p90 / p99, and the slowest 1% split");
console.log("| policy | long prompts | short prompts | slowest 1%: n | of them long | short: behind a waiting long prompt / behind any waiting / no room for its own KV at the decision |");
console.log("|---|---|---|---|---|---|");
for (const r of runs) {
  const all = Array.from(r.ttft).filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  const p99 = all[Math.floor(0.99 * all.length)]!;
  const lt = longIds.map((i) => r.ttft[i]!);
  const st: number[] = [];
  const tail: number[] = [];
  for (let i = 0; i < n; i++) {
    if (w.requests[i]!.promptTokens < LONG) st.push(r.ttft[i]!);
    if (r.ttft[i]! >= p99) tail.push(i);
  }
  const tl = tail.filter((i) => w.requests[i]!.promptTokens >= LONG).length;
  const tb = `${tail.filter((i) => r.behindLong[i]).length} / ${tail.filter((i) => r.behindAny[i]).length} / ${tail.filter((i) => r.shortNoRoom[i]).length}`;
  const f = (xs: number[]) => `${ms(qs(xs, 0.5))} / ${ms(qs(xs, 0.9))} / ${ms(qs(xs, 0.99))}`;
  console.log(`| ${r.name} | ${f(lt)} | ${f(st)} | ${tail.length} | ${tl} | ${tb} |`);
}
console.log("");
console.log("Short prompts in the slowest 1% with no room for their own KV at the chosen engine: n, shortfall median / max (tokens), the ledger admitted it (prefix_aware)");
for (const r of runs) {
  const all = Array.from(r.ttft).filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  const p99 = all[Math.floor(0.99 * all.length)]!;
  const ids: number[] = [];
  for (let i = 0; i < n; i++) if (w.requests[i]!.promptTokens < LONG && r.ttft[i]! >= p99 && r.shortNoRoom[i]) ids.push(i);
  const sf = ids.map((i) => r.shortfall[i]!);
  console.log(`- ${r.name}: ${ids.length}, ${k0(qs(sf, 0.5))} / ${k0(qs(sf, 1))}${r.name === "prefix_aware" ? `, ledger admitted ${ids.filter((i) => r.ledgerAdmits[i]).length}` : ""}`);
}
console.log("");
console.log("Long prompts: TTFT = wait (arrival → admission) + admission → first token; ms, p50 / p90 / p99 of each part");
for (const r of runs) {
  const waits = longIds.map((i) => r.admitAt[i]! - w.requests[i]!.arrivalMs);
  const after = longIds.map((i) => r.ttft[i]! - (r.admitAt[i]! - w.requests[i]!.arrivalMs));
  const f = (xs: number[]) => `${ms(qs(xs, 0.5))} / ${ms(qs(xs, 0.9))} / ${ms(qs(xs, 0.99))}`;
  console.log(`- ${r.name}: wait ${f(waits)}; after admission ${f(after)}`);
}
console.log("");
// What the p99 would be if each policy's long prompts had the other's TTFT, request by request (the same trace
// and seed, so the same requests): does swapping the long prompts' or the short prompts' TTFT close the gap?
const [pa, dy] = runs as [Run, Run];
const mix = (longFrom: Run, shortFrom: Run) => {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const src = w.requests[i]!.promptTokens >= LONG ? longFrom : shortFrom;
    if (!Number.isNaN(src.ttft[i]!)) xs.push(src.ttft[i]!);
  }
  xs.sort((a, b) => a - b);
  return xs[Math.floor(0.99 * xs.length)]!;
};
console.log("p99 of a mixed run (each request's TTFT from the policy named; same requests in both runs):");
console.log(`- long from prefix_aware, short from prefix_aware: ${ms(mix(pa, pa))}`);
console.log(`- long from dynamo,       short from prefix_aware: ${ms(mix(dy, pa))}`);
console.log(`- long from prefix_aware, short from dynamo:       ${ms(mix(pa, dy))}`);
console.log(`- long from dynamo,       short from dynamo:       ${ms(mix(dy, dy))}`);
