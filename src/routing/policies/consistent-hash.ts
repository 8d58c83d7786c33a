/**
 * consistent_hash: every request goes to the ring home of its ring key
 * (leading blocks), walking the key's probe sequence past full backends.
 * The classic bounded-load baseline; no affinity index in the decision.
 */
import { FleetRing, placeOnRing, RING_KEY_BLOCKS, ringKey } from "../placement";
import type { BackendSpec, FleetView, PolicyPick, RouteRequest, RoutingPolicy } from "../types";

export interface ConsistentHashOptions {
  /** Leading blocks forming the ring key. Default 4. */
  readonly ringKeyBlocks?: number;
}

export class ConsistentHashPolicy implements RoutingPolicy {
  readonly name = "consistent_hash";
  private readonly ring = new FleetRing();
  private readonly keyBlocks: number;

  constructor(options: ConsistentHashOptions = {}) {
    this.keyBlocks = options.ringKeyBlocks ?? RING_KEY_BLOCKS;
  }

  pick(req: RouteRequest, fleet: FleetView): PolicyPick {
    return placeOnRing(this.ring.of(fleet), ringKey(req, this.keyBlocks), fleet);
  }

  onBackendsChanged(backends: readonly BackendSpec[]): void {
    this.ring.rebuild(backends);
  }
}
