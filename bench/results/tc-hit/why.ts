// @ts-nocheck -- runs on branch tc-hit (or text-count) only: it reads src/routing/text-counts.ts, which main does not have.
// Why the recount in the cost's prefill alone moves almost nothing: for every request the window cut whose text
// an earlier turn of ours completed (TextCounts knows it), where its history is held (a backend that matches the
// whole window and has an extent there) and what became of each holder in the decision: chosen; out of its work
// bound (or the shared-prefix cap); held back (a memory wait there while another candidate admits now); priced
// dearer than the choice. Run from the tree whose policy is measured (this branch, or main with RECOUNT unset:
// then "known" is read from a TextCounts fed the same way, without the policy using it). Audit only.
//   MOONCAKE_TRACE=... npx tsx bench/results/tc-hit/why.ts mooncake 8 2 tuning 2 qwen3-30b-a3b-h100-vllm
import { PrefixAwarePolicy } from "../../../src/routing/policies/prefix-aware";
import { Router } from "../../../src/routing/router";
import { TextCounts } from "../../../src/routing/text-counts";
import type { FleetView, RouteRequest } from "../../../src/routing/types";
import { cutByWindow } from "../../../src/routing/window-extents";
import { GATEWAY_VIEW } from "../../../sim/request-view";
import { simulatePolicy } from "../../../sim/simulator";
import { loadAuditRunFromArgv, MOONCAKE_MOE_8_TUNING } from "../audit-run";

const run = await loadAuditRunFromArgv(MOONCAKE_MOE_8_TUNING);
const { w, fleet } = run;
const policy = new PrefixAwarePolicy();
// Private parts read through a cast (an audit only).
const p = policy as unknown as {
  pick: (req: RouteRequest, fleet: FleetView, ctx: unknown) => { index: number };
  onCompleted: (
    req: RouteRequest,
    index: number,
    outcome: { ok: boolean; promptTokens?: number; cachedTokens?: number },
    ctx: unknown,
  ) => void;
  extents: { extent(i: number, key: number): number | undefined };
  costs: Float64Array;
  admitWaits: Float64Array;
  bound: { fits: (fleet: FleetView, i: number, work: number, fw: unknown) => boolean };
};
const texts = new TextCounts();
let textsSynced = false;
const fitsOf: boolean[] = [];
const fits = p.bound.fits.bind(p.bound);
p.bound.fits = (f, i, work, fw) => {
  const ok = fits(f, i, work, fw);
  fitsOf[i] = ok;
  return ok;
};
const tally = { known: 0, noHolder: 0, fullNoExtent: 0, partial: 0, chosenHolder: 0, outOfBound: 0, heldBack: 0, dearer: 0, other: 0 };
const gaps: number[] = [];
// The requests without a holder: the index's longest match (tokens) at the decision, then what the engine served.
const noHolderMatch = new Map<RouteRequest, number>();
const served = { n: 0, indexTokens: 0, engineCached: 0, moreThanIndex: 0 };
const pick = p.pick.bind(policy);
p.pick = (req, f, ctx) => {
  if (!textsSynced) {
    texts.reset(f.backends.map((b) => b.kvCacheTokens));
    textsSynced = true;
  }
  fitsOf.length = 0;
  const out = pick(req, f, ctx);
  const n = req.blocks.length;
  if (n === 0 || !cutByWindow(req.promptTokens, n, f.blockTokens)) return out;
  const key = req.blocks[n - 1]!;
  if (texts.known(key, req.promptTokens) === undefined) return out;
  tally.known++;
  const matched = f.matchedBlocks(req.blocks);
  const holders: number[] = [];
  for (let i = 0; i < f.backends.length; i++)
    if (f.healthy[i] && matched[i] === n && p.extents.extent(i, key) !== undefined) holders.push(i);
  if (holders.length === 0) {
    tally.noHolder++;
    let full = 0;
    let part = 0;
    for (let i = 0; i < f.backends.length; i++) {
      if (matched[i] === n) full++;
      else if (matched[i]! > 0) part++;
    }
    noHolderMatch.set(req, Math.max(...matched) * f.blockTokens);
    if (full > 0) tally.fullNoExtent++;
    else if (part > 0) tally.partial++;
  }
  else if (holders.includes(out.index)) tally.chosenHolder++;
  else {
    // The best-placed holder's fate, in the order the decision meets them.
    const fates = holders.map((h) =>
      fitsOf[h] === false ? 0 : p.costs[h] === Number.POSITIVE_INFINITY && p.admitWaits[h]! > 0 ? 1 : p.costs[h]! < Number.POSITIVE_INFINITY ? 2 : 3,
    );
    const best = Math.max(...fates);
    if (best === 2) {
      tally.dearer++;
      const h = holders[fates.indexOf(2)]!;
      gaps.push(p.costs[h]! - p.costs[out.index]!);
    } else if (best === 1) tally.heldBack++;
    else if (best === 0) tally.outOfBound++;
    else tally.other++;
  }
  return out;
};
const done = p.onCompleted.bind(policy);
p.onCompleted = (req, index, outcome, ctx) => {
  const n = req.blocks.length;
  if (outcome.ok && outcome.promptTokens !== undefined && n > 0 && textsSynced) {
    const bt = w.blockTokens;
    if (cutByWindow(req.promptTokens, n, bt)) texts.observe(req.blocks[n - 1]!, req.promptTokens, outcome.promptTokens, bt);
  }
  const m = noHolderMatch.get(req);
  if (m !== undefined && outcome.ok && outcome.cachedTokens !== undefined) {
    served.n++;
    served.indexTokens += m;
    served.engineCached += outcome.cachedTokens;
    if (outcome.cachedTokens > m) served.moreThanIndex++;
  }
  done(req, index, outcome, ctx);
};
const res = simulatePolicy(w, fleet, "prefix_aware", (specs) => new Router(specs, { policy, blockTokens: w.blockTokens }), GATEWAY_VIEW);
gaps.sort((a, b) => a - b);
console.log(`${run.spec} ${fleet.backends} ×${run.set} seed ${run.seed} ${process.argv[7] ?? ""}: p99 ${(res.ttftP99Ms / 1000).toFixed(2)} s`);
console.log(
  `cut, text known: ${tally.known}; no holder left: ${tally.noHolder} (whole window matched but no extent ${tally.fullNoExtent}, part of it matched ${tally.partial}); a holder chosen: ${tally.chosenHolder}; holders passed over: out of bound ${tally.outOfBound}, held back ${tally.heldBack}, priced dearer ${tally.dearer} (gap ms p50 ${gaps[Math.floor(gaps.length / 2)]?.toFixed(0) ?? "-"}, max ${gaps.at(-1)?.toFixed(0) ?? "-"}), other ${tally.other}`,
);
const k = (v: number) => `${(v / 1000).toFixed(1)}k`;
console.log(
  `no holder: ${served.n} completed; the index's longest match mean ${k(served.indexTokens / Math.max(1, served.n))}, the engine's cached tokens where it ran mean ${k(served.engineCached / Math.max(1, served.n))}; cached more than the index matched: ${served.moreThanIndex}`,
);
