/**
 * prefix_aware (ours): lowest expected cost among healthy backends under
 * their load bound, which counts work, not requests (../work-bound.ts): a
 * backend may hold c × its fair share of the fleet's uncached-prompt +
 * output tokens in flight, plus a slack of its KV capacity. Cost = queued prefill + uncached prefill + a
 * small in-flight term (../cost-model.ts) (+ the prefill it repeats while the prefix's home still computes
 * it, below), and the uncached part comes from
 * the affinity index's longest cached prefix on each backend. With engine
 * readings, a backend whose engine reports its queue head waiting for KV
 * memory (a head our ledger believes fits) is charged the wait until that
 * head is admitted, as the least wait before the request's prefill starts
 * (../engine-memory.ts): vLLM admits first come first served, so a short
 * request queues behind a long one blocked on memory.
 *
 * While a prefix's home is still computing it (a burst of a new document or
 * system prompt: its first request's prefill is queued or running), the
 * other backends are also charged the prefill they would repeat: the
 * tokens they must prefill beyond the home's, at their rate
 * (../pending-prefill.ts tracks what each backend is still computing). A
 * later request of the burst waits about as long at the home as anywhere
 * (vLLM V1 reuses a block from the step that schedules it, so joining costs
 * the rest of that prefill plus the request's own suffix; elsewhere, the
 * whole prefix again, about as long), so its own time to first token cannot
 * tell them apart; the second copy is what differs, GPU time that later
 * requests on that backend queue behind, and the burst is prefilled once per
 * backend it touches. Charged once: at least the next request there waits for
 * it. The home still loses when its queue is longer than that. Once the home
 * has computed the prefix its saving is in its own cost (suffix only), and
 * the charge stops: spreading a hot prefix to a second home is then a
 * load decision, left to the queue, decode and bound terms as before.
 * The requests that join a prefix still being computed share one step after
 * it, so each joiner's suffix delays every joiner already waiting: once a
 * request's own first token at the home plus that delay (k joiners × its
 * suffix) would pass a fresh prefill elsewhere, the home is shut for the
 * request and it starts one copy, uncharged; past two backends computing it,
 * or while other prefixes are being computed from scratch (bursts
 * clustering) and the backends idle for a prefill (no queue or memory wait)
 * do not number at least those prefixes plus two, no copy (../burst-split.ts, ../fresh-prefills.ts).
 *
 * The work bound alone lets a hot shared prefix (many requests, each mostly
 * cached, little work) pile its requests on its home: a request cap applies
 * to shared prefixes only (../shared-prefixes.ts). With T our requests in
 * flight, n_i of them on backend i, f_i the requests backend i's fresh engine
 * reading holds beyond ours (0 without one; ../foreign-load.ts), Φ = Σ_j f_j
 * and F the floor (DEFAULT_SHARED_FLOOR):
 *
 *   i may take a request whose match on i ends at key k, when another of our
 *   in-flight requests on i also reused k,
 *   only if  n_i + f_i < max(⌈c · w_i/Σw_healthy · (T + Φ + 1)⌉, F)
 *
 * (the bounded-load cap of ../bounded-load.ts, in requests, never below F).
 * Counting foreign requests keeps a hot prefix's overflow off engines that
 * another client floods, which the cost's foreign term already avoids but
 * which hold few of ours; without readings f = Φ = 0 and it is the cap on our
 * own requests alone.
 * The overflow goes to the cheapest backend within both bounds: one that
 * holds the prefix too if any, else a new replica, which prefills it once
 * and then shares later requests with the first home. A conversation's turn
 * matches through its own history, which no other in-flight request reuses:
 * the cap never moves it. A request with no match anywhere is not shared.
 *
 * A prompt longer than the key window matches at most the whole window; on a
 * backend that matched all of it, the part past the window counts as cached
 * up to the length of the last prompt of ours that ended its window there
 * (../window-extents.ts): a conversation's next turn repeats its previous one,
 * which that backend computed whole. Without it every backend looked equally
 * cold past the window, so a 100k-token conversation's home was priced as if
 * it had to prefill 70k tokens again. Only the prefill changes: those tokens
 * stay in the request's KV and work (the bound, the memory wait), as before,
 * since a running request holds its cached blocks too (vLLM V1 takes a hit
 * block out of the free queue). Counting them as free as well kept long
 * conversations home past their backend's memory and cost Mooncake MoE's p99
 * (bench/results/policy-work.md, "Hit gaps").
 *
 * A request that would wait for KV memory on a backend (by the ledger) holds that engine's FCFS queue
 * while it waits: while another candidate can admit it now, such a backend is held back, whatever its
 * cost (../admission-view.ts). A prompt that nearly fills an engine's KV goes where it fits.
 *
 * Every request is placed by cost, cached prefix or not: a prefix nobody
 * holds goes where its full prefill starts soonest. Placing new prefixes by
 * the ring alone sees load only through the bound, so long cold
 * prompts queue behind each other.
 *
 * The ring still decides among near-equal costs (within `tieToleranceMs`):
 * candidates are taken in the probe order of the request's key, so an idle
 * fleet gives a new prefix one stable home that every gateway replica agrees
 * on, and a hot prefix's burst spills to a stable second home. The key is
 * - the ring key (first `ringKeyTokens` tokens) while no backend holds a
 *   useful match (under `minMatchTokens`: a chat template header or a
 *   tenant-wide opener predicts nothing about the rest of the prompt);
 * - otherwise the divergence key, the first block past the longest known
 *   prefix: keying on where a prefix starts would pile every conversation
 *   of a shared system prompt onto one backend.
 * Both thresholds are in tokens, not blocks, so they mean the same at any
 * block size (4 blocks are 64 tokens at vLLM's 16-token blocks, 2,048 at
 * Mooncake's 512).
 *
 * Reasons: `affinity` when the chosen backend holds a useful match and no
 * backend with a longer one was at its bound (work, or the shared-prefix cap); `spill` when one was, or when
 * the chosen backend holds nothing useful while others do (their queues made
 * them costlier); for a new prefix `ring`, or `spill` when its ring home was
 * at its bound; `fallback` when no healthy backend can take the request
 * within its bound: every healthy backend is then priced as above (cost and
 * admission view) and the request goes to the cheapest, since the bound holds
 * nowhere (a prompt near a backend's whole KV on a busy fleet). Going to the
 * least work per weight instead ignored the prefill queued ahead: on Mooncake
 * MoE 16 ×4 (tuning) 55 of 73 fallbacks landed behind a queue while another
 * engine could start them at once on 41 (bench/results/policy-work.md,
 * "Mooncake MoE 16's tail").
 */
import { holdBack } from "../admission-view";
import { boundedCap } from "../bounded-load";
import { startsCopy } from "../burst-split";
import { type CostModelOptions, type CostTerms, PrefillCostModel, type PrefillSlot } from "../cost-model";
import { EngineMemory } from "../engine-memory";
import { EstimateMargin } from "../estimate-margin";
import { ForeignLoad, type ForeignLoadOptions } from "../foreign-load";
import { FreshPrefills } from "../fresh-prefills";
import { PendingPrefill } from "../pending-prefill";
import { FleetRing, ringKey } from "../placement";
import { DEFAULT_SHARED_FLOOR, SharedPrefixes } from "../shared-prefixes";
import type {
  BackendSpec,
  BlockKey,
  EngineSignals,
  FleetView,
  PolicyPick,
  PromptEstimateError,
  RouteContext,
  RouteOutcome,
  RouteReason,
  RouteRequest,
  RoutingPolicy,
} from "../types";
import { cutByWindow, expectedCachedTokens, WindowExtents } from "../window-extents";
import { WorkBound } from "../work-bound";

export interface PrefixAwareOptions extends CostModelOptions, ForeignLoadOptions {
  /** Shortest match (tokens) that counts as affinity and switches to the divergence key. Default 64. */
  readonly minMatchTokens?: number;
  /** Leading tokens forming the ring key of a new prefix. Default 64. */
  readonly ringKeyTokens?: number;
  /** Costs within this many ms of the cheapest are ties, decided by the key's probe order. Default 1. */
  readonly tieToleranceMs?: number;
  /** s of the work bound, a share of each backend's KV capacity (../work-bound.ts). Default DEFAULT_WORK_SLACK. */
  readonly workSlack?: number;
  /** F of the request cap on shared prefixes: requests in flight below which it never binds (../shared-prefixes.ts). */
  readonly sharedFloor?: number;
}

/**
 * Told, at each decision, every candidate's cost as pick() summed it: the cost model's terms, the prefill
 * a backend would repeat while the prefix's home computes it, the engine reading's foreign term, and the
 * total. Backends out of their bound or held back are not candidates and are not told. For audits
 * (bench/results/decision-regret/); `terms` is reused: read it within the call.
 */
export type CostObserver = (
  backend: number,
  terms: Readonly<CostTerms>,
  repeatMs: number,
  foreignMs: number,
  costMs: number,
) => void;

export const DEFAULT_MIN_MATCH_TOKENS = 64;
export const DEFAULT_RING_KEY_TOKENS = 64;
export const DEFAULT_TIE_TOLERANCE_MS = 1;

interface Routed {
  readonly uncached: number;
  readonly slot: PrefillSlot;
  /** Blocks the backend held of it when it was routed: it computes the rest. */
  readonly from: number;
  /** SharedPrefixes' generation when it was counted there; undefined when it matched nothing. */
  readonly sharedGeneration: number | undefined;
  /** The learned margin's generation when it was routed (../estimate-margin.ts released()). */
  readonly marginGeneration: number;
  /** The fleet's block size when it was routed. */
  readonly blockTokens: number;
  /**
   * The Worker's count past the key window, at the fleet's block size then (0 unless the window cut its
   * keys: it runs a whole block past them): the window extents' and the learned margin's share.
   */
  readonly tail: number;
  /** Whether it computes its prefix from scratch (../fresh-prefills.ts): counted there until it ends. */
  readonly fresh: boolean;
}

/** A prompt on one backend, split by what it costs there (PrefixAwarePolicy.promptParts). */
interface PromptParts {
  /** Tokens to prefill. */
  uncached: number;
  /** Tokens expected cached past the key window: no prefill, still KV. */
  past: number;
}

/** The key of the last block a match of `matched` blocks reuses; undefined for no match. */
function reuseKey(blocks: readonly BlockKey[], matched: number): BlockKey | undefined {
  return matched > 0 ? blocks[matched - 1] : undefined;
}

/** The Worker's count of `req` past its key window, when the window cut it (it estimates there); else 0. */
function tailPastWindow(req: RouteRequest, blockTokens: number): number {
  return cutByWindow(req.promptTokens, req.blocks.length, blockTokens)
    ? req.promptTokens - req.blocks.length * blockTokens
    : 0;
}

/**
 * Whether `req`'s count is one prompt's: the window extents note a prompt's length at its window's last key.
 * A /v1/completions batch is keyed as its first prompt and counted as all its prompts (RouteRequest.prompts),
 * and the router never learns the first one's own count: noted, the sum would read as that first prompt
 * computed far past its window, and a later batch (or prompt) with the same first prompt there would count
 * its other prompts as cached.
 */
function onePrompt(req: RouteRequest): boolean {
  return req.prompts === undefined || req.prompts <= 1;
}

/** Blocks spanning at least `tokens` tokens (at least one). */
function blocksFor(tokens: number, blockTokens: number): number {
  return Math.max(1, Math.ceil(tokens / blockTokens));
}

export class PrefixAwarePolicy implements RoutingPolicy {
  readonly name = "prefix_aware";
  readonly model: PrefillCostModel;
  /** An audit's observer of each decision's candidate costs (CostObserver); none by default. */
  costObserver: CostObserver | undefined = undefined;
  /** Load the engines report beyond ours (engine readings), added to the cost: ../foreign-load.ts. */
  private readonly foreign: ForeignLoad;
  /** A queue the engine reports blocked on memory, which our ledger may not see: ../engine-memory.ts. */
  private readonly memory: EngineMemory;
  private readonly ring = new FleetRing();
  private readonly minMatchTokens: number;
  private readonly keyTokens: number;
  private readonly tolerance: number;
  private syncedTo: readonly BackendSpec[] | undefined;
  private readonly routed = new WeakMap<RouteRequest, Routed>();
  private costs = new Float64Array(0);
  /** The request's work on each backend (uncached prompt + output + `past`), for the bound. */
  private work = new Float64Array(0);
  /** Tokens expected cached on each backend past the key window (see the header): no prefill, still KV. */
  private past = new Float64Array(0);
  /** The request's wait for KV memory on each backend, by the ledger (the admission view). */
  private memoryWaits = new Float64Array(0);
  /** The same wait for the request's work plus the learned margin (../estimate-margin.ts): what the hold back reads. */
  private admitWaits = new Float64Array(0);
  private readonly bound: WorkBound;
  private readonly pending = new PendingPrefill();
  /** Prefixes of ours being computed from scratch in the fleet: the burst split's clustering guard. */
  private readonly fresh = new FreshPrefills();
  private readonly shared = new SharedPrefixes();
  private readonly extents = new WindowExtents();
  /** The hold back's margin for the Worker's count past the window, learned per backend (../estimate-margin.ts). */
  private readonly margin = new EstimateMargin();
  /** promptParts' answer, reused (a decision asks once per backend). */
  private readonly parts: PromptParts = { uncached: 0, past: 0 };
  private readonly sharedFloor: number;
  /** This decision's f_i (see the header) per backend, their sum Φ, and Σw_healthy. */
  private foreignHere = new Float64Array(0);
  /** This decision's engine reading per backend: read once, used by every term. */
  private readings: (EngineSignals | undefined)[] = [];
  private foreignTotal = 0;
  private healthyWeight = 0;

  constructor(options: PrefixAwareOptions = {}) {
    this.model = new PrefillCostModel(options);
    this.foreign = new ForeignLoad(options);
    this.memory = new EngineMemory(this.foreign.maxAgeMs);
    this.minMatchTokens = options.minMatchTokens ?? DEFAULT_MIN_MATCH_TOKENS;
    this.keyTokens = options.ringKeyTokens ?? DEFAULT_RING_KEY_TOKENS;
    this.tolerance = options.tieToleranceMs ?? DEFAULT_TIE_TOLERANCE_MS;
    this.bound = new WorkBound(this.model, options.workSlack);
    this.sharedFloor = options.sharedFloor ?? DEFAULT_SHARED_FLOOR;
    if (!(this.sharedFloor >= 0) || !Number.isFinite(this.sharedFloor))
      throw new RangeError(`sharedFloor: must be >= 0, got ${this.sharedFloor}`);
  }

  pick(req: RouteRequest, fleet: FleetView, ctx: RouteContext): PolicyPick {
    this.sync(fleet.backends);
    const n = req.blocks.length;
    const bt = fleet.blockTokens;
    const size = fleet.backends.length;
    const matched = n > 0 ? fleet.matchedBlocks(req.blocks) : new Int32Array(size);
    let longest = 0;
    for (let i = 0; i < size; i++) if (fleet.healthy[i] && matched[i]! > longest) longest = matched[i]!;
    const minMatch = Math.min(blocksFor(this.minMatchTokens, bt), n);
    const warm = n > 0 && longest >= minMatch;
    const key: BlockKey = warm
      ? req.blocks[Math.min(longest, n - 1)]!
      : ringKey(req, blocksFor(this.keyTokens, bt));

    if (this.costs.length !== size) {
      this.costs = new Float64Array(size);
      this.work = new Float64Array(size);
      this.past = new Float64Array(size);
      this.memoryWaits = new Float64Array(size);
      this.admitWaits = new Float64Array(size);
      this.foreignHere = new Float64Array(size);
      this.readings = new Array(size);
    }
    const costs = this.costs;
    const work = this.work;
    const past = this.past;
    const fleetWork = this.bound.measure(fleet);
    this.healthyWeight = fleetWork.healthyWeight;
    this.foreignTotal = 0;
    const read = fleet.engineSignals;
    for (let i = 0; i < size; i++) {
      this.readings[i] = read === undefined ? undefined : read(i);
      this.foreignHere[i] = this.foreignRequests(this.readings[i], ctx.now);
      this.foreignTotal += this.foreignHere[i]!;
    }
    const output = req.outputTokens ?? 0;
    // The least prefill any backend within its bound needs, and where: the home of its prefix.
    let leastUncached = Number.POSITIVE_INFINITY;
    let leastAt = -1;
    for (let i = 0; i < size; i++) {
      const parts = this.promptParts(req, matched[i]!, i, bt);
      const uncached = parts.uncached;
      // Cached past the window, still KV the request holds while it runs: its work and memory as before.
      past[i] = parts.past;
      work[i] = uncached + output + past[i]!;
      if (!this.bound.fits(fleet, i, work[i]!, fleetWork) || this.overShareCap(req, matched, fleet, i)) {
        costs[i] = Number.POSITIVE_INFINITY;
        continue;
      }
      costs[i] = 0;
      if (uncached < leastUncached) {
        leastUncached = uncached;
        leastAt = i;
      }
    }
    // No healthy backend within its bound (a prompt larger than a backend's slack on a busy fleet): the
    // bound cannot hold anywhere, so every healthy backend is priced as a candidate, with the admission
    // view, and the request goes where its first token is expected soonest (see `fallback` above).
    let fallback = leastAt < 0;
    if (fallback) {
      fallback = false;
      for (let i = 0; i < size; i++)
        if (fleet.healthy[i]) {
          costs[i] = 0;
          fallback = true;
        }
    }
    // While the home still computes the prefix, the other backends are charged the prefill they would
    // repeat (see the header).
    const homeComputing =
      leastAt >= 0 &&
      matched[leastAt]! > 0 &&
      this.pending.isPending(leastAt, req.blocks[matched[leastAt]! - 1]!, ctx.now);
    // The admission view: not where the request would block the engine's queue waiting for memory, while
    // another candidate can admit it now, with the learned margin for the Worker's count past the window
    // on what is in flight there and on this request (../estimate-margin.ts).
    // The cost keeps the ledger's own wait; only the hold back reads the margin.
    const ownTail = tailPastWindow(req, bt);
    for (let i = 0; i < size; i++) {
      // Out of bounds: neither the hold back nor the cost reads it.
      if (costs[i] === Number.POSITIVE_INFINITY) continue;
      // vLLM V1 admits a request when its input fits (scheduler_reserve_full_isl): its output is not asked.
      const input = work[i]! - output;
      // The cached history our requests pin there counts as held memory (the index's pinned entries).
      const pinned = fleet.pinnedTokens?.(i);
      this.memoryWaits[i] = this.model.memoryWaitForMs(i, input, ctx.now, pinned);
      const margin = this.margin.marginTokens(i, ownTail);
      // The hold back asks only "any wait?", and more tokens never wait less: a second walk only when the
      // ledger alone admits it now.
      this.admitWaits[i] =
        margin > 0 && !(this.memoryWaits[i]! > 0)
          ? this.model.memoryWaitForMs(i, input + margin, ctx.now, pinned)
          : this.memoryWaits[i]!;
    }
    holdBack(costs, this.admitWaits);
    // A request whose own first token at the home plus the delay it adds to the joiners waiting there would
    // pass a fresh prefill elsewhere starts one copy (../burst-split.ts): the home is shut for this request,
    // and nobody is charged the repeat.
    const chargeRepeat =
      homeComputing && !this.splitsBurst(req, matched, leastAt, leastUncached, output, fleet, ctx.now);
    let bestCost = Number.POSITIVE_INFINITY;
    let candidates = 0;
    for (let i = 0; i < size; i++) {
      if (costs[i] === Number.POSITIVE_INFINITY) continue;
      const uncached = work[i]! - output - past[i]!;
      const r = this.readings[i];
      const headWait = this.memory.headWaitMs(r, i, fleet.backends[i]!.kvCacheTokens, this.model, ctx.now);
      const terms = this.model.costTerms(
        i,
        uncached,
        fleet.inflight[i]!,
        ctx.now,
        output + past[i]!,
        headWait,
        this.memoryWaits[i]!,
        // A prefill of ours not yet answered there is a wait the gateway knows of (cost-model.ts), but one of a
        // step, and it never counts against a backend holding the longest match of this prompt: a step-level
        // wait must not move a request off its cache (policy-work.md, "Zipf's first-token lateness ...": the
        // charge moved multi-turn turns off their history). For a prompt nobody holds it counts everywhere.
        !(matched[i]! > 0 && matched[i] === longest),
      );
      const repeatMs = chargeRepeat ? this.model.prefillMs(i, uncached - leastUncached) : 0;
      const foreignMs = this.foreign.costMs(fleet, r, i, ctx.now, this.model);
      const cost = terms.total + repeatMs + foreignMs;
      costs[i] = cost;
      this.costObserver?.(i, terms, repeatMs, foreignMs, cost);
      candidates++;
      if (cost < bestCost) bestCost = cost;
    }

    const ring = this.ring.of(fleet);
    if (candidates === 0) {
      const index = this.bound.leastLoaded(fleet, work, ring.ranks(key));
      return { index, reason: "fallback" };
    }
    // First in the key's probe order among the near-cheapest; the home is the first healthy one.
    let home = -1;
    const limit = bestCost + this.tolerance;
    const found = ring.probe(key, (i) => {
      if (!fleet.healthy[i]) return false;
      if (home < 0) home = i;
      return costs[i]! <= limit;
    });
    const best = found.index;
    if (fallback) return { index: best, reason: "fallback" };

    let reason: RouteReason;
    const full = (i: number) => fleet.healthy[i] === true && costs[i] === Number.POSITIVE_INFINITY;
    if (!warm) reason = best !== home && full(home) ? "spill" : "ring";
    else {
      reason = matched[best]! >= minMatch ? "affinity" : "spill";
      for (let i = 0; i < size; i++) {
        if (matched[i]! > matched[best]! && full(i)) {
          reason = "spill";
          break;
        }
      }
    }
    return { index: best, reason };
  }

  /**
   * The burst split (../burst-split.ts), asked while `home` still computes the prefix `req` matches there:
   * true when it shuts the home for this request (its cost becomes Infinity) so that it starts a copy.
   */
  private splitsBurst(
    req: RouteRequest,
    matched: Int32Array,
    home: number,
    homeUncached: number,
    output: number,
    fleet: FleetView,
    now: number,
  ): boolean {
    const costs = this.costs;
    if (costs[home] === Number.POSITIVE_INFINITY) return false;
    const m = matched[home]!;
    const key = req.blocks[m - 1]!;
    let homes = 0;
    let idle = 0;
    let elsewhere = Number.POSITIVE_INFINITY;
    for (let i = 0; i < costs.length; i++) {
      // Outside its bound (or shut): neither idle nor a place for the copy, but still a home if it computes it.
      const within = costs[i] !== Number.POSITIVE_INFINITY;
      const start = within ? this.startWaitMs(i, now) : Number.POSITIVE_INFINITY;
      // Idle for a prefill: within its bound, and a prefill routed there now would start now, the cost model's
      // queue and memory waits both zero (decodes in flight do not make it busy for a prefill).
      if (within && fleet.healthy[i] === true && !(start > 0)) idle++;
      if (matched[i] === m && this.pending.isPending(i, key, now)) {
        homes++;
        continue;
      }
      if (!within) continue;
      const uncached = this.work[i]! - output - this.past[i]!;
      const first = start + this.model.prefillMs(i, uncached);
      if (first < elsewhere) elsewhere = first;
    }
    const suffix = this.model.prefillMs(home, homeUncached);
    const own = this.startWaitMs(home, now) + suffix;
    const joiners = this.pending.joinersOf(home, key, now);
    const othersComputing = this.fresh.othersPending(req.blocks[0]!, now);
    if (!startsCopy(own, suffix, joiners, elsewhere, homes, othersComputing, idle)) return false;
    costs[home] = Number.POSITIVE_INFINITY;
    return true;
  }

  /** When a request's prefill could start on backend i, ms from now: after its queue and its memory wait. */
  private startWaitMs(i: number, now: number): number {
    return Math.max(this.model.queueWaitMs(i, now), this.memoryWaits[i]!);
  }

  /**
   * `req`'s prompt on backend i, which matched `matched` of its keys: the tokens it prefills there, and
   * those expected cached past the key window (see the header: no prefill, still KV). The object is
   * reused: read it before the next call.
   */
  private promptParts(req: RouteRequest, matched: number, i: number, bt: number): PromptParts {
    const cached = this.cachedTokens(req, matched, i, bt);
    const parts = this.parts;
    parts.uncached = Math.max(0, req.promptTokens - cached);
    parts.past = Math.max(0, Math.min(cached, req.promptTokens) - matched * bt);
    return parts;
  }

  /** Tokens of `req` expected cached on backend i, which matched `matched` of its keys (see the header). */
  private cachedTokens(req: RouteRequest, matched: number, i: number, bt: number): number {
    const n = req.blocks.length;
    if (n === 0 || matched < n) return matched * bt;
    return expectedCachedTokens(req.promptTokens, n, matched, bt, this.extents.extent(i, req.blocks[n - 1]!));
  }

  /** f_i of the header: the requests backend i's fresh engine reading holds beyond ours, 0 without one. */
  protected foreignRequests(r: EngineSignals | undefined, now: number): number {
    return this.foreign.requests(r, now);
  }

  /**
   * The request cap on shared prefixes (see the header): backend i may not take a request that reuses a
   * prefix another of our in-flight requests there also reuses once it holds, ours and foreign,
   * max(its bounded-load cap of requests ⌈c · w_i/Σw_healthy · (T + Φ + 1)⌉ (../bounded-load.ts), F).
   */
  protected overShareCap(req: RouteRequest, matched: Int32Array, fleet: FleetView, i: number): boolean {
    const held = fleet.inflight[i]! + this.foreignHere[i]!;
    if (held < this.sharedFloor) return false;
    // No foreign load anywhere: the fleet's own cap, so without readings the bound is exactly the old one.
    const cap =
      this.foreignTotal > 0
        ? boundedCap(
            fleet.backends[i]!.weight,
            this.healthyWeight,
            fleet.totalInflight + this.foreignTotal,
            fleet.balanceFactor,
          )
        : fleet.cap(i);
    if (held < cap) return false;
    const key = reuseKey(req.blocks, matched[i]!);
    return key !== undefined && this.shared.sharers(i, key) > 0;
  }

  onRouted(req: RouteRequest, index: number, fleet: FleetView, ctx: RouteContext): void {
    this.sync(fleet.backends);
    const bt = fleet.blockTokens;
    const from = req.blocks.length > 0 ? fleet.matchedBlocks(req.blocks)[index]! : 0;
    const { uncached, past } = this.promptParts(req, from, index, bt);
    // The backend computes the whole prompt: what it holds past the window from now on.
    const tail = tailPastWindow(req, bt);
    if (tail > 0 && onePrompt(req))
      this.extents.note(index, req.blocks[req.blocks.length - 1]!, req.promptTokens, bt);
    // The Router counted this request in flight before calling us.
    const slot = this.model.routed(
      index,
      uncached,
      req.outputTokens ?? 0,
      fleet.inflight[index]! - 1,
      ctx.now,
      past,
      // The keyed blocks it adds to the index (in its input already) and the history it matched and pins.
      Math.max(0, req.blocks.length - from) * bt,
      from * bt,
    );
    // A request that reuses a prefix its backend still computes joins that prefill's batch (../burst-split.ts).
    if (from > 0) this.pending.joined(index, req.blocks[from - 1]!, ctx.now);
    this.pending.add(index, req.blocks, from, slot.end);
    // Nothing of it held there, and at least a prefix long: a new prefix, or a copy of one (../fresh-prefills.ts).
    const fresh = from === 0 && req.blocks.length > 0 && uncached >= this.minMatchTokens;
    if (fresh) this.fresh.add(index, req.blocks[0]!, slot.end);
    const key = reuseKey(req.blocks, from);
    const sharedGeneration = key === undefined ? undefined : this.shared.add(index, key);
    const marginGeneration = this.margin.routed(index, tail);
    this.routed.set(req, {
      uncached,
      slot,
      from,
      sharedGeneration,
      marginGeneration,
      blockTokens: bt,
      tail,
      fresh,
    });
    this.foreign.observeRouted(uncached);
  }

  /**
   * The request's first token streamed back: its prefill is over, and the cost model learns how late it came
   * against its predicted end (PrefillCostModel.firstToken).
   */
  onFirstToken(req: RouteRequest, index: number, ctx: RouteContext): void {
    const routed = this.routed.get(req);
    if (routed === undefined || index < 0 || index >= this.model.size) return;
    this.model.firstToken(index, routed.slot, ctx.now);
  }

  prefillEndOverrunMs(): number | undefined {
    return this.model.prefillEndOverrunMs();
  }

  onCompleted(req: RouteRequest, index: number, outcome: RouteOutcome, ctx: RouteContext): void {
    const routed = this.routed.get(req);
    this.routed.delete(req);
    if (routed === undefined || index < 0 || index >= this.model.size) return;
    if (outcome.ok) this.model.released(index, routed.slot, ctx.now, outcome.ttftMs, outcome.outputTokens);
    else this.model.released(index, routed.slot, ctx.now);
    this.memory.completed(index, routed.slot, ctx.now);
    this.margin.released(index, routed.tail, routed.marginGeneration);
    this.pending.done(index, req.blocks, routed.from, routed.slot.end);
    if (routed.fresh) this.fresh.done(index, req.blocks[0]!, routed.slot.end);
    const key = reuseKey(req.blocks, routed.from);
    if (key !== undefined && routed.sharedGeneration !== undefined)
      this.shared.remove(index, key, routed.sharedGeneration);
    if (!outcome.ok) return;
    // The answer's length the engine reported: the memory wait's expected answer (cost-model.ts expectedAnswer).
    if (outcome.outputTokens !== undefined) this.model.observeOutput(outcome.outputTokens);
    const prompt = outcome.promptTokens ?? req.promptTokens;
    // The engine's count replaces the Worker's estimate past the window (usage.prompt_tokens).
    if (outcome.promptTokens !== undefined && routed.tail > 0 && onePrompt(req))
      this.extents.note(index, req.blocks[req.blocks.length - 1]!, outcome.promptTokens, routed.blockTokens);
    if (outcome.promptTokens !== undefined)
      this.margin.observe(index, routed.tail, req.promptTokens, outcome.promptTokens);
    if (outcome.ttftMs === undefined) return;
    const uncached =
      outcome.cachedTokens === undefined ? routed.uncached : Math.max(0, prompt - outcome.cachedTokens);
    this.model.observe(index, routed.slot, uncached, outcome.ttftMs);
  }

  onBackendsChanged(backends: readonly BackendSpec[]): void {
    this.sync(backends);
  }

  /** What the cost model has learned: an operator sees what an uncached token is judged to cost. */
  prefillTokensPerSec(index: number): number | undefined {
    return index >= 0 && index < this.model.size ? this.model.prefillTokensPerSec(index) : undefined;
  }

  /** What one more request in flight adds to an engine step on backend i, ms, as learned (undefined before). */
  learnedInflightMs(index: number): number | undefined {
    return index >= 0 && index < this.model.size ? this.model.learnedInflightMs(index) : undefined;
  }

  /** How wrong the Worker's count past the key window has been on backend i (undefined before any). */
  promptEstimateError(index: number): PromptEstimateError | undefined {
    return this.margin.errors(index);
  }

  private sync(backends: readonly BackendSpec[]): void {
    if (this.syncedTo === backends) return;
    this.model.setBackends(backends);
    this.pending.reset(backends.length);
    this.fresh.reset();
    this.shared.reset(backends.length);
    // A backend holds at most its capacity in blocks, so no more distinct window ends than that (in blocks
    // of the size each extent is noted at).
    this.extents.reset(backends.map((b) => b.kvCacheTokens));
    this.memory.reset(backends.length);
    this.margin.reset(backends.length);
    this.ring.rebuild(backends);
    this.syncedTo = backends;
  }
}
