// Where prefix_aware's hit falls short of the pooled oracle on a Mooncake run, request by request, and which
// rule of the decision made each loss. For every request, in tokens a hit can cover (never the prompt's last):
// - oracle: what the pooled oracle (sim/oracle.ts: one LRU of the fleet's whole KV, no load) hits;
// - best: the longest prefix any engine holds at the decision (the engine model's real state, read-only);
// - chosen: what the chosen engine holds at the decision; served: what it reported when the request completed.
// So  Σ oracle = Σ served + unreachable (oracle − best, where positive: evicted everywhere before it came, or
// never held by one engine) + sent away (best − chosen) + lost while queued (chosen − served) − over (best above
// oracle: the fleet kept what the pooled LRU dropped).
// A request is "sent away" when some engine held more than the chosen one. The rule is read off the policy's
// own decision (its costs, bound, share cap, admission view), for the holder that came closest to being picked:
//   index      the gateway did not expect that holder to hold more than the chosen backend (affinity index /
//              window extents; the gateway's information);
//   fallback   no backend was within its work bound: every backend priced, the holder was not the pick;
//   bound      the holder was past its work bound; cap: past the shared-prefix request cap;
//   held back  the admission view (a memory wait by the ledger there, while another candidate admits now);
//   split      the burst split shut the holder for this request;
//   tie        the holder's cost was within the tie tolerance of the cheapest and lost on the key's probe order;
//   cost       the holder was priced dearer (beyond the tolerance); the terms that made the difference are summed.
// The scrape is off in the race (no engine readings), so no rule reads /metrics here ("scrape" is always 0).
// An audit only: the policy is read through casts, nothing here is used by the router or the simulator.
//   MOONCAKE_TRACE=… [TIE=1] SEEDS="1 2" npx tsx bench/results/moe16-hit/audit.ts mooncake 16 4 tuning 0 qwen3-30b-a3b-h100-vllm
import { PrefixAwarePolicy, DEFAULT_TIE_TOLERANCE_MS } from "../../../src/routing/policies/prefix-aware";
import type { CostTerms } from "../../../src/routing/cost-model";
import { Router } from "../../../src/routing/router";
import type { FleetView, PolicyPick, RouteContext, RouteRequest } from "../../../src/routing/types";
import { viewOf } from "../../../sim/policies";
import { simulatePolicy } from "../../../sim/simulator";
import { placementCost } from "../../../sim/clairvoyant";
import { EngineModel } from "../../../sim/model/engine-model";
import { type AuditRunSpec, type EngineInside, loadAuditRun, pooledOracleByRequest } from "../audit-run";

const [spec = "mooncake", backends = "16", load = "4", set = "tuning", , preset = "qwen3-30b-a3b-h100-vllm"] =
  process.argv.slice(2);
const seeds = (process.env.SEEDS ?? "1 2").trim().split(/\s+/).map(Number);
const tie = process.env.TIE === undefined ? DEFAULT_TIE_TOLERANCE_MS : Number(process.env.TIE);
if (!(tie >= 0)) throw new RangeError(`TIE: must be >= 0 ms, got ${process.env.TIE}`);

const RULES = ["index", "fallback", "bound", "cap", "held back", "split", "tie", "cost", "scrape"] as const;
type Rule = (typeof RULES)[number];
// Most favourable first: the holder that came closest to the pick names the rule.
const NEARNESS: Rule[] = ["tie", "cost", "split", "held back", "cap", "bound", "index"];
const TERMS = ["startMs", "prefillMs", "kvMs", "inflightMs", "repeatMs"] as const;

interface Decision {
  reason: string;
  fallback: boolean;
  costs: Float64Array;
  fits: boolean[];
  overCap: boolean[];
  admitWaits: Float64Array;
  expected: Float64Array; // tokens the policy expects cached on each backend
  terms: Record<string, number>[];
  bestCost: number;
  work: Float64Array; // the request's work on each backend (the bound's x)
  past: Float64Array; // of it, tokens expected cached past the key window
  held: Float64Array; // our work in flight on each backend (the ledger), before the request
  window: number; // tokens the key window covers
  matched: Int32Array;
  memoryWaits: Float64Array;
}

interface Tally {
  n: number;
  tokens: number;
  /** Exact TTFT (engine copies, true output lengths: an audit's hindsight) at the holder minus at the chosen, ms. */
  exact: number[];
  /** The same with the first-token delay each placement adds to the requests already there (objective "total"). */
  exactTotal: number[];
  costTerms: Record<string, number>;
  sub: Map<string, { n: number; tokens: number }>;
}
const newTally = (): Tally => ({ n: 0, tokens: 0, exact: [], exactTotal: [], costTerms: {}, sub: new Map() });

function audit(seed: number) {
  const a: AuditRunSpec = { spec, backends: Number(backends), load: Number(load), set, seed, preset };
  return loadAuditRun(a).then(({ w, fleet }) => {
    const bt = w.blockTokens;
    const n = w.requests.length;
    const usableBlocks = (i: number) =>
      Math.min(w.promptBlocks[i]!.length, Math.floor((w.requests[i]!.promptTokens - 1) / bt));
    // The pooled oracle per request: sim/oracle.ts's loop, kept per request (audit-run.ts), checked against it.
    const oracle = pooledOracleByRequest(w, Math.floor((fleet.backends * fleet.kvCacheTokens) / bt));

    const policy = new PrefixAwarePolicy({ tieToleranceMs: tie });
    const p = policy as unknown as {
      pick: (req: RouteRequest, fleet: FleetView, ctx: RouteContext) => PolicyPick;
      bound: { fits: (fleet: FleetView, i: number, work: number, fw: unknown) => boolean };
      overShareCap: (req: RouteRequest, matched: Int32Array, fleet: FleetView, i: number) => boolean;
      promptParts: (req: RouteRequest, matched: number, i: number, bt: number) => { uncached: number };
      costs: Float64Array;
      admitWaits: Float64Array;
      memoryWaits: Float64Array;
      work: Float64Array;
      past: Float64Array;
    };
    let fits: boolean[] = [];
    let overCap: boolean[] = [];
    let terms: Record<string, number>[] = [];
    const fitsOrig = p.bound.fits.bind(p.bound);
    // WHATIF=holder: a what-if, not a policy: the work bound never binds the backends the gateway expects to
    // hold the most of the request (more than the least anywhere): the most hit the bound could be costing.
    let holders: boolean[] = [];
    const whatIf = process.env.WHATIF;
    // WHATIF=history: the same, only where no other request of ours in flight there reuses the match (its own
    // history, not a shared prefix: the shared-prefix cap's test), so a hot shared prefix stays bounded.
    if (whatIf !== undefined && whatIf !== "holder" && whatIf !== "history")
      throw new RangeError(`WHATIF: "holder", "history" or unset, got ${whatIf}`);
    const sharers = (policy as unknown as { shared: { sharers: (i: number, key: number) => number } }).shared;
    p.bound.fits = (f, i, work, fw) => (fits[i] = fitsOrig(f, i, work, fw) || (f.healthy[i] === true && holders[i] === true));
    const capOrig = p.overShareCap.bind(policy);
    p.overShareCap = (req, m, f, i) => (overCap[i] = capOrig(req, m, f, i));
    policy.costObserver = (i, t: Readonly<CostTerms>, repeatMs) => {
      terms[i] = { startMs: t.startMs, prefillMs: t.prefillMs, kvMs: t.kvMs, inflightMs: t.inflightMs, repeatMs };
    };
    const decisions: Decision[] = new Array(n);
    let k = 0;
    const pickOrig = p.pick.bind(policy);
    p.pick = (req, f, ctx) => {
      fits = [];
      overCap = [];
      terms = [];
      if (whatIf !== undefined && req.blocks.length > 0) {
        (policy as unknown as { sync: (b: unknown) => void }).sync(f.backends);
        const m = f.matchedBlocks(req.blocks);
        const e = Array.from(m, (x, i) => req.promptTokens - p.promptParts(req, x, i, f.blockTokens).uncached);
        const most = Math.max(...e);
        holders = e.map(
          (x, i) =>
            x === most &&
            most > Math.min(...e) &&
            (whatIf === "holder" || m[i]! === 0 || sharers.sharers(i, req.blocks[m[i]! - 1]!) === 0),
        );
      } else holders = [];
      const out = pickOrig(req, f, ctx);
      const size = f.backends.length;
      const matched = req.blocks.length > 0 ? f.matchedBlocks(req.blocks) : new Int32Array(size);
      const expected = new Float64Array(size);
      for (let i = 0; i < size; i++)
        expected[i] = req.promptTokens - p.promptParts(req, matched[i]!, i, f.blockTokens).uncached;
      let bestCost = Number.POSITIVE_INFINITY;
      for (const c of p.costs) if (c < bestCost) bestCost = c;
      // Every request goes through pick once, in arrival order (no second client).
      decisions[k++] = {
        reason: out.reason,
        fallback: out.reason === "fallback",
        costs: Float64Array.from(p.costs),
        fits,
        overCap,
        admitWaits: Float64Array.from(p.admitWaits),
        expected,
        terms,
        bestCost,
        work: Float64Array.from(p.work),
        past: Float64Array.from(p.past),
        held: Float64Array.from({ length: size }, (_, i) => policy.model.heldTokens(i)),
        window: req.blocks.length * f.blockTokens,
        matched,
        memoryWaits: Float64Array.from(p.memoryWaits),
      };
      return out;
    };

    const best = new Float64Array(n);
    const chosen = new Float64Array(n);
    const holder = new Int32Array(n).fill(-1);
    const exact = new Float64Array(n).fill(Number.NaN);
    const exactTotal = new Float64Array(n).fill(Number.NaN);
    let scratch: EngineModel[] | undefined;
    // The holder engine's free KV (tokens) at the decision, and its queue (requests waiting).
    const holderFree = new Float64Array(n);
    const holderWaiting = new Int32Array(n);
    const served = new Float64Array(n).fill(Number.NaN);
    const to = new Int32Array(n);
    const res = simulatePolicy(
      w,
      fleet,
      "prefix_aware",
      (specs) => new Router(specs, { policy, blockTokens: bt }),
      viewOf("prefix_aware"),
      undefined,
      {
        routed(i, b, _d, engines) {
          const usable = usableBlocks(i);
          const held = engines.map((e) => Math.min(usable, e.cachedPrefixBlocks(w.promptBlocks[i]!)) * bt);
          to[i] = b;
          chosen[i] = held[b]!;
          best[i] = Math.max(...held);
          // The holder that came closest to the pick among those holding the most.
          if (best[i]! > chosen[i]!) {
            const d = decisions[i]!;
            let bestRank = Number.POSITIVE_INFINITY;
            held.forEach((h, j) => {
              if (h !== best[i]) return;
              const r = NEARNESS.indexOf(fateOf(d, j, b));
              if (r < bestRank) {
                bestRank = r;
                holder[i] = j;
              }
            });
            // What each placement would have given, exactly: the holder against the chosen engine.
            scratch ??= engines.map((e) => new EngineModel(e.config));
            const er = {
              id: `audit-${i}`,
              blocks: w.promptBlocks[i]!,
              promptTokens: w.requests[i]!.promptTokens,
              outputTokens: Math.max(1, w.requests[i]!.outputTokens),
            };
            const now = w.requests[i]!.arrivalMs;
            const h = holder[i]!;
            const inside = engines[h] as unknown as EngineInside;
            holderFree[i] = inside.pool.numFree * bt;
            holderWaiting[i] = inside.scheduler.waiting.length - inside.scheduler.waitHead;
            exact[i] =
              placementCost(engines[h]!, scratch[h]!, er, now, "ttft") - placementCost(engines[b]!, scratch[b]!, er, now, "ttft");
            exactTotal[i] =
              placementCost(engines[h]!, scratch[h]!, er, now, "total") -
              placementCost(engines[b]!, scratch[b]!, er, now, "total");
          }
        },
        done(i, _b, cached) {
          served[i] = cached;
        },
      },
    );

    function fateOf(d: Decision, j: number, b: number): Rule {
      if (!(d.expected[j]! > d.expected[b]!)) return "index";
      // A fallback prices every backend, in its bound or not: what decided is what follows.
      if (!d.fallback && d.fits[j] === false) return "bound";
      if (!d.fallback && d.overCap[j] === true) return "cap";
      if (d.costs[j] === Number.POSITIVE_INFINITY) return d.admitWaits[j]! > 0 ? "held back" : "split";
      return d.costs[j]! <= d.bestCost + tie ? "tie" : "cost";
    }

    const tallies = new Map<Rule, Tally>(RULES.map((r) => [r, newTally()]));
    const details: string[] = [];
    let sum = { oracle: 0, best: 0, chosen: 0, served: 0, prompt: 0, unreachable: 0, over: 0, away: 0, queued: 0 };
    let unreachableNone = 0; // unreachable tokens of requests no engine held anything of
    let unreachableNoneN = 0;
    let awayN = 0;
    for (let i = 0; i < n; i++) {
      if (Number.isNaN(served[i]!)) throw new Error(`request ${i} never completed`);
      sum.prompt += w.requests[i]!.promptTokens;
      sum.oracle += oracle[i]!;
      sum.best += best[i]!;
      sum.chosen += chosen[i]!;
      sum.served += served[i]!;
      const u = Math.max(0, oracle[i]! - best[i]!);
      sum.unreachable += u;
      if (u > 0 && best[i] === 0) {
        unreachableNone += u;
        unreachableNoneN++;
      }
      sum.over += Math.max(0, best[i]! - oracle[i]!);
      sum.queued += chosen[i]! - served[i]!;
      if (best[i]! > chosen[i]!) {
        const lost = best[i]! - chosen[i]!;
        sum.away += lost;
        awayN++;
        const d = decisions[i]!;
        const j = holder[i]!;
        let rule = fateOf(d, j, to[i]!);
        let sub = rule as string;
        if (d.fallback && rule !== "index") {
          sub = `fallback/${rule}`;
          rule = "fallback";
        }
        const c = to[i]!;
        const ktk = (x: number) => `${(x / 1000).toFixed(1)}k`;
        if (rule === "bound" || rule === "index" || rule === "held back" || sub.startsWith("fallback"))
          details.push(
            `${sub} #${i} prompt ${ktk(w.requests[i]!.promptTokens)} window ${ktk(d.window)} lost ${ktk(lost)} | ` +
              `holder b${j}: engine ${ktk(best[i]!)} expected ${ktk(d.expected[j]!)} (index ${ktk(d.matched[j]! * bt)}) x ${ktk(d.work[j]!)} (past ${ktk(d.past[j]!)}) held ${ktk(d.held[j]!)} | ` +
              `chosen b${c}: engine ${ktk(chosen[i]!)} expected ${ktk(d.expected[c]!)} x ${ktk(d.work[c]!)} held ${ktk(d.held[c]!)} | served ${ktk(served[i]!)} reason ${d.reason} | holder memory wait ${d.memoryWaits[j]!.toFixed(0)} ms, with margin ${d.admitWaits[j]!.toFixed(0)} ms; engine free ${ktk(holderFree[i]!)} waiting ${holderWaiting[i]} | exact Δ ${exact[i]!.toFixed(0)} ms`,
          );
        const t = tallies.get(rule)!;
        t.n++;
        t.tokens += lost;
        t.exact.push(exact[i]!);
        t.exactTotal.push(exactTotal[i]!);
        const s = t.sub.get(sub) ?? { n: 0, tokens: 0 };
        s.n++;
        s.tokens += lost;
        t.sub.set(sub, s);
        if (rule === "cost" || sub === "fallback/cost") {
          for (const term of TERMS) {
            const diff = (d.terms[j]?.[term] ?? 0) - (d.terms[to[i]!]?.[term] ?? 0);
            t.costTerms[term] = (t.costTerms[term] ?? 0) + diff;
          }
        }
      }
    }
    return { details, res, sum, tallies, awayN, unreachableNone, unreachableNoneN, n, oracleRate: sum.oracle / sum.prompt };
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.floor(s.length / 2)]!;
};
const pct = (x: number, of: number) => `${((100 * x) / of).toFixed(1)}%`;
const kt = (x: number) => `${(x / 1e6).toFixed(2)}M`;
console.log(
  `# ${spec} ${backends} ×${load} ${set}, ${preset}, prefix_aware at tie ${tie} ms, seeds ${seeds.join(" ")}\n`,
);
const total = { oracle: 0, served: 0, unreachable: 0, over: 0, away: 0, queued: 0 };
const rulesTotal = new Map<string, { n: number; tokens: number }>();
const exactByRule = new Map<string, { exact: number[]; total: number[]; tokens: number[] }>();
for (const seed of seeds) {
  const r = await audit(seed);
  const s = r.sum;
  console.log(
    `## seed ${seed}: p99 ${(r.res.ttftP99Ms / 1000).toFixed(3)} s, hit ${pct(r.res.hitRate, 1)} of prompt tokens = ${pct(s.served, s.oracle)} of the oracle (${pct(r.oracleRate, 1)}); ${r.n} requests, reasons ${JSON.stringify(r.res.reasons)}\n`,
  );
  console.log("| oracle tokens | tokens | % of oracle |\n| --- | --- | --- |");
  console.log(`| pooled oracle hit | ${kt(s.oracle)} | 100% |`);
  console.log(`| served by prefix_aware | ${kt(s.served)} | ${pct(s.served, s.oracle)} |`);
  console.log(
    `| unreachable: oracle above the best engine at arrival | ${kt(s.unreachable)} | ${pct(s.unreachable, s.oracle)} |`,
  );
  console.log(
    `|   of it, no engine held any of the prompt (${r.unreachableNoneN} requests) | ${kt(r.unreachableNone)} | ${pct(r.unreachableNone, s.oracle)} |`,
  );
  console.log(`| sent away: best engine above the chosen (${r.awayN} requests) | ${kt(s.away)} | ${pct(s.away, s.oracle)} |`);
  console.log(`| lost while queued: chosen at the decision − served | ${kt(s.queued)} | ${pct(s.queued, s.oracle)} |`);
  console.log(`| over: best engine above the oracle (a gain, subtracted) | ${kt(s.over)} | ${pct(s.over, s.oracle)} |`);
  console.log(`| reachable: Σ min(oracle, best) | ${kt(s.oracle - s.unreachable)} | ${pct(s.oracle - s.unreachable, s.oracle)} |\n`);
  console.log("| rule (holder nearest the pick) | requests | tokens lost | % of oracle | detail |\n| --- | --- | --- | --- | --- |");
  for (const [rule, t] of r.tallies) {
    const detail = [
      ...[...t.sub].filter(([k]) => k !== rule).map(([k, v]) => `${k} ${v.n} (${kt(v.tokens)})`),
      ...(t.n > 0
        ? [
            `holder exactly faster ${t.exact.filter((x) => x < 0).length} of ${t.n} (median Δ ${median(t.exact).toFixed(0)} ms; with the delay to others: faster ${t.exactTotal.filter((x) => x < 0).length}, median Δ ${median(t.exactTotal).toFixed(0)} ms)`,
          ]
        : []),
      ...Object.entries(t.costTerms).map(([k, v]) => `Δ${k} mean ${(v / Math.max(1, t.n)).toFixed(0)}`),
    ].join("; ");
    console.log(`| ${rule} | ${t.n} | ${kt(t.tokens)} | ${pct(t.tokens, s.oracle)} | ${detail} |`);
    const e = exactByRule.get(rule) ?? { exact: [], total: [], tokens: [] };
    e.exact.push(...t.exact);
    e.total.push(...t.exactTotal);
    exactByRule.set(rule, e);
    for (const [k, v] of t.sub) {
      const x = rulesTotal.get(k) ?? { n: 0, tokens: 0 };
      x.n += v.n;
      x.tokens += v.tokens;
      rulesTotal.set(k, x);
    }
  }
  console.log("");
  if (process.env.DETAIL !== undefined) console.log(`${r.details.join("\n")}\n`);
  for (const key of Object.keys(total) as (keyof typeof total)[]) total[key] += s[key];
}
if (seeds.length > 1) {
  console.log(`## seeds ${seeds.join(" + ")} pooled\n`);
  console.log(
    `served ${pct(total.served, total.oracle)} of the oracle; unreachable ${pct(total.unreachable, total.oracle)}; sent away ${pct(total.away, total.oracle)}; lost while queued ${pct(total.queued, total.oracle)}; over −${pct(total.over, total.oracle)}\n`,
  );
  console.log("| rule | requests | tokens lost | % of oracle |\n| --- | --- | --- | --- |");
  for (const [k, v] of [...rulesTotal].sort((x, y) => y[1].tokens - x[1].tokens))
    console.log(`| ${k} | ${v.n} | ${kt(v.tokens)} | ${pct(v.tokens, total.oracle)} |`);
  console.log("\n| rule | sent away | holder exactly faster (own TTFT) | median Δ ms | faster counting the delay to others | median Δ ms |\n| --- | --- | --- | --- | --- | --- |");
  for (const [k, e] of exactByRule)
    if (e.exact.length > 0)
      console.log(
        `| ${k} | ${e.exact.length} | ${e.exact.filter((x) => x < 0).length} | ${median(e.exact).toFixed(0)} | ${e.total.filter((x) => x < 0).length} | ${median(e.total).toFixed(0)} |`,
      );
}
