/**
 * The Router's live FleetView: arrays indexed like `backends`, updated in
 * place as requests come and go, plus each backend's affinity index.
 *
 * matchedBlocks is memoised per decision: every policy that scores prefixes
 * asks for it, and the Router and onRouted read the chosen backend's entry
 * again; all of them see the index as it was when the decision started.
 */
import type { BackendAffinity } from "./affinity-index";
import { boundedCap } from "./bounded-load";
import type { BackendSpec, BlockKey, EngineSignals, FleetView } from "./types";

export class FleetState implements FleetView {
  backends: readonly BackendSpec[] = [];
  healthy: boolean[] = [];
  inflight: number[] = [];
  affinity: BackendAffinity[] = [];
  totalInflight = 0;
  healthyWeight = 0;
  readonly engineSignals?: (i: number) => EngineSignals;
  private memoBlocks: readonly BlockKey[] | undefined;
  private memo = new Int32Array(0);

  constructor(
    readonly blockTokens: number,
    readonly balanceFactor: number,
    engineSignals?: (i: number) => EngineSignals,
  ) {
    if (engineSignals !== undefined) this.engineSignals = engineSignals;
  }

  cap(i: number): number {
    return boundedCap(this.backends[i]!.weight, this.healthyWeight, this.totalInflight, this.balanceFactor);
  }

  matchedBlocks(blocks: readonly BlockKey[]): Int32Array {
    if (blocks === this.memoBlocks) return this.memo;
    const out = new Int32Array(this.backends.length);
    if (blocks.length > 0) for (let i = 0; i < out.length; i++) out[i] = this.affinity[i]!.matched(blocks);
    this.memoBlocks = blocks;
    this.memo = out;
    return out;
  }

  /** Backend i's match, from the memo when this decision already computed it. */
  matchedOn(i: number, blocks: readonly BlockKey[]): number {
    if (blocks === this.memoBlocks) return this.memo[i]!;
    return blocks.length === 0 ? 0 : this.affinity[i]!.matched(blocks);
  }

  /** The index changed or a new decision starts: memoised matches are stale. */
  forgetMatches(): void {
    this.memoBlocks = undefined;
  }

  recomputeHealthyWeight(): void {
    let w = 0;
    for (let i = 0; i < this.backends.length; i++) if (this.healthy[i]) w += this.backends[i]!.weight;
    this.healthyWeight = w;
  }
}
