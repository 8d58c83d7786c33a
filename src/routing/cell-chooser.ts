/**
 * Which cell of a pool a request goes to: the one implementation the Worker
 * (router-client.ts, one chooser per pool and isolate) and the simulator
 * (sim/cells.ts) run. Pure: time is a parameter.
 *
 * The aim is the routing core's, one level up: requests that share a prefix
 * go where it is cached, and no cell is loaded above c × its share. A cell
 * holds its backends' affinity indexes; the Worker sees none of them, so it
 * works with prefix families instead (prefix-family.ts):
 *
 * 1. A request's family is first named by its key at CELL_KEY_TOKENS (64)
 *    tokens, prefix_aware's ring key for a new prefix: a system prompt and
 *    every conversation and user of it.
 * 2. A family goes whole to one cell: the first in its key's probe order
 *    (its ring home, then the ring's next cells for that key) that is under
 *    its bounded-load cap (cell-ring.ts), judged on the cells' loads as
 *    route responses relay them (cell-loads.ts). Nothing remembers where a
 *    family went: its cell is a function of its key and the cells' figures,
 *    which every isolate holds alike, so every isolate sends a family's
 *    requests to the same cell, and the family is back home as soon as home
 *    is under its cap. Before, each isolate moved a family on its own and
 *    kept it where it moved; with eight isolates a conversation's turns
 *    were then placed in different cells by different isolates. Measured on
 *    the tuning set with eight isolates, placing by the rule instead gained
 *    up to 4.4 points of hit rate (multi-turn, K = 2) and lost at most 0.6;
 *    with one isolate keeping families where they moved was up to 1.3
 *    points better (bench/results/scale.md, "Cells"). Production has many
 *    isolates.
 * 3. A family that alone takes a fair cell's share of the traffic (1/K) or
 *    more cannot stay whole without overloading its cell — a hot tenant, or
 *    a system prompt every request starts with (the Mooncake trace's first
 *    512 tokens) — so it is split where its requests diverge: each request
 *    continues as a member of the family named by its key at the first block
 *    past the shared part (a conversation, a sub-template), and steps 2–3
 *    apply to that family. Splitting costs the shared part once per cell.
 * 4. A split-off family (a level below the first) that this isolate has
 *    placed before is a continuing one: its home cell holds its history, and
 *    moving it costs all of it, where spilling a new family costs nothing
 *    past the shared prefix every cell holds. So a continuing family leaves
 *    its home only at the looser bound CELL_KEEP_FACTOR (1.5) × the home's
 *    share, and a cell near its cap sheds new families first. Before, every
 *    family left at c, and a conversation moved each time its home's load
 *    crossed the cap: 4–6% of multi-turn chat's requests off home at K = 4,
 *    each costing its history, the whole of K = 4's loss against K = 1
 *    (bench/results/scale.md, "Cells"). Whole families (a first-level
 *    family, a tenant, a hot prompt) are bound at c as before: they are
 *    where a cell's load can be too large for good. "Placed before" is this
 *    isolate's own memory (its family table) and, since the relay of
 *    cell-families.ts, every other isolate's: a call that places a family
 *    new to its isolate names it to the cell, and every route response
 *    carries the cell's last few such names to whichever isolate called.
 *    Before the relay the gain shrank as a conversation's turns spread over
 *    more isolates.
 *
 * 5. A cell whose RouterDO answered that it has no usable backend (every one
 *    drained, ejected or failing: the Worker asks with RouteInput.movable and hears
 *    no_usable, router-client.ts) is passed over for CELL_UNUSABLE_MS
 *    (markUnusable): its families go to the next cell of their probe order,
 *    and the other cells' caps are of the load they then carry; after that
 *    long a request asks the family's home again, and a cell that answers a
 *    request is usable at once (markUsable). Before, the chooser knew cells'
 *    loads, not whether a cell could serve: every request whose family was
 *    at home there was sent to a failing backend (a cell never ejects its
 *    last ones, as one RouterDO never ejects a pool's), while the other cells had backends in rotation. Unless
 *    every cell is marked: then none is passed over (as with one RouterDO).
 *
 * A family's share, and where its requests diverge, are learnt from the
 * requests that pass through this isolate; the cells' loads from every route
 * response, each relaying what every isolate told that cell. An isolate that
 * sees a family for the first time places it where every other does.
 */
import { RelayedFamilies } from "./cell-families";
import { CellLoads } from "./cell-loads";
import type { CellRing } from "./cell-ring";
import {
  CELL_FAMILY_MEMORY,
  CELL_JOIN_SHARE,
  CELL_KEEP_FACTOR,
  CELL_MIN_EVIDENCE,
  CELL_RATE_HALF_LIFE_MS,
  CELL_SHARE_Z,
  CELL_SPLIT_SHARE,
  CELL_UNUSABLE_MS,
} from "./defaults";
import { DecayedCount, PrefixFamily } from "./prefix-family";
import { shareBounds } from "./share-bounds";
import type { BlockKey, RouteRequest } from "./types";

/** Leading tokens whose key names a request's first family: prefix_aware's ring key for a new prefix (64). */
export const CELL_KEY_TOKENS = 64;

/** Family levels a request descends at most (each level at least one block deeper). */
const MAX_LEVELS = 8;

/** Block position of a request's first family key: the block spanning its first CELL_KEY_TOKENS tokens. */
export function cellKeyDepth(blockTokens: number): number {
  return Math.max(1, Math.ceil(CELL_KEY_TOKENS / blockTokens)) - 1;
}

export type CellReason =
  /** The family's ring home. */
  | "home"
  /** Its home was at its cap: the next cell in its key's probe order under its own. */
  | "spill";

export interface CellChoice {
  readonly cell: number;
  readonly reason: CellReason;
  /** Family levels descended: 0 for a whole first family, 1 after one split, … */
  readonly level: number;
  /** A split-off family this isolate placed for the first time (its key): for the route call, to relay (cell-families.ts). */
  readonly placed?: BlockKey;
}

export interface CellChooserOptions {
  readonly balanceFactor: number;
  readonly blockTokens: number;
  readonly familyMemory?: number;
  readonly halfLifeMs?: number;
  /** The bound a continuing split-off family leaves its home at (default CELL_KEEP_FACTOR; never below balanceFactor). */
  readonly keepFactor?: number;
  /** How long a cell heard to have no usable backend is passed over (default CELL_UNUSABLE_MS). */
  readonly unusableMs?: number;
}

export class CellChooser {
  readonly loads: CellLoads;
  /** Split-off families other isolates placed, as the cells relayed them (bounded at familyMemory keys). */
  private readonly relayed: RelayedFamilies;
  private readonly families = new Map<BlockKey, PrefixFamily>();
  private readonly total: DecayedCount;
  private readonly balanceFactor: number;
  private readonly keepFactor: number;
  private readonly firstDepth: number;
  private readonly memory: number;
  private readonly halfLifeMs: number;
  private readonly unusableMs: number;
  /** Per cell: until when it is passed over (it answered that it has no usable backend); 0 when never. */
  private readonly unusableUntil: Float64Array;

  constructor(
    readonly ring: CellRing,
    options: CellChooserOptions,
  ) {
    this.loads = new CellLoads(ring.size);
    this.balanceFactor = options.balanceFactor;
    this.keepFactor = Math.max(options.balanceFactor, options.keepFactor ?? CELL_KEEP_FACTOR);
    this.firstDepth = cellKeyDepth(options.blockTokens);
    this.memory = options.familyMemory ?? CELL_FAMILY_MEMORY;
    this.relayed = new RelayedFamilies(this.memory);
    this.halfLifeMs = options.halfLifeMs ?? CELL_RATE_HALF_LIFE_MS;
    this.total = new DecayedCount(this.halfLifeMs);
    this.unusableMs = options.unusableMs ?? CELL_UNUSABLE_MS;
    this.unusableUntil = new Float64Array(ring.size);
  }

  /** `cell`'s RouterDO answered, at `now`, that it has no usable backend: pass it over for unusableMs (step 5). */
  markUnusable(cell: number, now: number): void {
    this.unusableUntil[cell] = now + this.unusableMs;
  }

  /** `cell`'s RouterDO answered a request with a backend in rotation: its families may come home at once. */
  markUsable(cell: number): void {
    this.unusableUntil[cell] = 0;
  }

  /** Whether `cell` is passed over at `now` (heard to have no usable backend within unusableMs). */
  unusable(cell: number, now: number): boolean {
    return now < this.unusableUntil[cell]!;
  }

  /** What a route response said of its cell's load. */
  report(cell: number, inflight: number, now: number): void {
    this.loads.report(cell, inflight, now);
  }

  /** What a route response relayed of the families placed in its cell (cell-families.ts). */
  learnFamilies(keys: readonly unknown[]): void {
    this.relayed.learn(keys);
  }

  choose(req: RouteRequest, now: number): CellChoice {
    if (this.ring.size === 1) return { cell: 0, reason: "home", level: 0 };
    this.total.add(now);
    const blocks = req.blocks;
    const n = blocks.length;
    let depth = Math.min(n, this.firstDepth + 1) - 1;
    // No full block: the prompt length stands for the key, as on the backend ring.
    let key: BlockKey = depth < 0 ? req.promptTokens : blocks[depth]!;
    let level = 0;
    for (;;) {
      const mine = this.families.has(key);
      const family = this.family(key, depth);
      family.rate.add(now);
      if (depth >= 0) family.observe(blocks);
      this.judgeShare(family, now);
      const shared = family.sharedBlocks();
      if (family.split && shared !== undefined && shared < n && shared > depth && level < MAX_LEVELS) {
        depth = shared;
        key = blocks[depth]!;
        level++;
        continue;
      }
      if (level === 0) return this.place(key, level, this.balanceFactor, now);
      // A continuing split-off family (placed before by this isolate or, relayed, by another) is held to the looser bound (step 4).
      const known = mine || this.relayed.has(key);
      const choice = this.place(key, level, known ? this.keepFactor : this.balanceFactor, now);
      return mine ? choice : { ...choice, placed: key };
    }
  }

  /**
   * Where a request goes when `chosen` answered that it is full (every backend at its bound on requests in
   * flight: router-client.ts): the other cells in the probe order of the request's first family key, the
   * order every isolate computes alike (a split-off family's own key is not rebuilt here: reading it would
   * move the family's counts). Reads nothing it learnt, changes nothing.
   */
  fallbackOrder(req: RouteRequest, chosen: number): number[] {
    const blocks = req.blocks;
    const depth = Math.min(blocks.length, this.firstDepth + 1) - 1;
    const key: BlockKey = depth < 0 ? req.promptTokens : blocks[depth]!;
    return Array.from(this.ring.order(key)).filter((c) => c !== chosen);
  }

  /** The first cell under its cap (`factor` × its share) in the family key's probe order (home first). */
  private place(key: BlockKey, level: number, factor: number, now: number): CellChoice {
    const { cell, skipped } = this.ring.firstUnderCap(key, this.loads, factor, now, (j) =>
      this.unusable(j, now),
    );
    return { cell, reason: skipped ? "spill" : "home", level };
  }

  /**
   * Splits a family whose share fills a cell; joins it again well below that (hysteresis). Two ways to
   * know: the share itself once this isolate has seen CELL_MIN_EVIDENCE requests, or sooner, a
   * confidence bound on it (share-bounds.ts) from the requests before this one — so a family that is
   * plainly hot is split after a few requests in every isolate, however small its part of the pool's
   * traffic, and a family's first request is never evidence of its own share.
   */
  private judgeShare(family: PrefixFamily, now: number): void {
    const k = this.ring.size;
    const n = this.total.read(now);
    const f = family.rate.read(now);
    const enough = n >= CELL_MIN_EVIDENCE;
    const before = shareBounds(f - 1, n - 1, CELL_SHARE_Z);
    if (!family.split && ((enough && (f / n) * k >= CELL_SPLIT_SHARE) || before.low * k >= CELL_SPLIT_SHARE))
      family.split = true;
    else if (family.split && ((enough && (f / n) * k < CELL_JOIN_SHARE) || before.high * k < CELL_JOIN_SHARE))
      family.split = false;
  }

  /** The family named by `key`, remembered least recently used first out. */
  private family(key: BlockKey, depth: number): PrefixFamily {
    let f = this.families.get(key);
    if (f !== undefined) {
      this.families.delete(key);
    } else {
      f = new PrefixFamily(depth, this.halfLifeMs);
      if (this.families.size >= this.memory) this.families.delete(this.families.keys().next().value!);
    }
    this.families.set(key, f);
    return f;
  }
}
