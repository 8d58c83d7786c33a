/**
 * Ring placement shared by the policies that use the ring (prefix_aware for
 * prefixes nobody caches yet, consistent_hash for everything).
 */
import { isEligible, leastOverloaded } from "./bounded-load";
import { HashRing } from "./ring";
import type { BackendSpec, BlockKey, FleetView, RouteReason, RouteRequest } from "./types";

/** Leading blocks that make up a request's ring key (64 tokens at 16-token blocks). */
export const RING_KEY_BLOCKS = 4;

/**
 * Where a request lives on the ring when nothing useful is cached: the key of
 * block min(n, 4) − 1, which folds in its first 64 tokens (chained keys), so
 * the chat template header alone does not decide. A request with no full
 * block is placed by the key of its whole short prompt (`promptKey`), so
 * different short prompts spread and a repeat finds the same home; without
 * one (a caller that computes none), by its prompt length.
 */
export function ringKey(req: RouteRequest, leadBlocks: number = RING_KEY_BLOCKS): BlockKey {
  const n = req.blocks.length;
  if (n === 0) return req.promptKey ?? req.promptTokens;
  return req.blocks[Math.min(n, leadBlocks) - 1]!;
}

/** A ring rebuilt whenever the fleet's backend list changes (the Router hands out a new array then). */
export class FleetRing {
  private ring = new HashRing([]);
  private builtFor: readonly BackendSpec[] | undefined;

  of(fleet: FleetView): HashRing {
    if (this.builtFor !== fleet.backends) this.rebuild(fleet.backends);
    return this.ring;
  }

  rebuild(backends: readonly BackendSpec[]): void {
    this.ring = new HashRing(backends);
    this.builtFor = backends;
  }
}

export interface Placement {
  readonly index: number;
  readonly reason: RouteReason;
}

/**
 * The first healthy backend under its cap in the key's probe order. `ring`
 * when no healthy backend ahead of it was full (an unhealthy home is skipped
 * silently: its keys' stable second home takes them), `spill` when one was,
 * `fallback` (least overloaded, ties by probe order) when all are full.
 */
export function placeOnRing(ring: HashRing, key: BlockKey, fleet: FleetView): Placement {
  let skippedFull = false;
  const found = ring.probe(key, (i) => {
    if (!fleet.healthy[i]) return false;
    if (isEligible(fleet, i)) return true;
    skippedFull = true;
    return false;
  });
  if (found.index >= 0) return { index: found.index, reason: skippedFull ? "spill" : "ring" };
  return { index: leastOverloaded(fleet, ring.ranks(key)), reason: "fallback" };
}
