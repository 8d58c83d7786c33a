/**
 * The Router's live FleetView: arrays indexed like `backends`, updated in
 * place as requests come and go, plus each backend's affinity index.
 *
 * matchedBlocks is memoised per decision: every policy that scores prefixes
 * asks for it, and the Router and onRouted read the chosen backend's entry
 * again; all of them see the index as it was when the decision started.
 *
 * With indexStride s > 1 the index holds every s-th block key only (the key
 * of block j·s − 1 stands for the prefix up to it: keys are chained), so a
 * match is found to s blocks' resolution at 1/s of the memory and of the
 * touches per request. Matches are still reported in blocks.
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
  readonly engineSignals?: (i: number) => EngineSignals | undefined;
  private memoBlocks: readonly BlockKey[] | undefined;
  private memo = new Int32Array(0);

  private anchorsFor: readonly BlockKey[] | undefined;
  private anchorsMemo: readonly BlockKey[] = [];

  constructor(
    readonly blockTokens: number,
    readonly balanceFactor: number,
    readonly indexStride: number,
    engineSignals?: (i: number) => EngineSignals | undefined,
  ) {
    if (engineSignals !== undefined) this.engineSignals = engineSignals;
  }

  cap(i: number): number {
    return boundedCap(this.backends[i]!.weight, this.healthyWeight, this.totalInflight, this.balanceFactor);
  }

  pinnedTokens(i: number): number {
    return this.affinity[i]!.pinnedEntries() * this.blockTokens * this.indexStride;
  }

  matchedBlocks(blocks: readonly BlockKey[]): Int32Array {
    if (blocks === this.memoBlocks) return this.memo;
    const out = new Int32Array(this.backends.length);
    const anchors = this.anchors(blocks);
    if (anchors.length > 0)
      for (let i = 0; i < out.length; i++) out[i] = this.affinity[i]!.matched(anchors) * this.indexStride;
    this.memoBlocks = blocks;
    this.memo = out;
    return out;
  }

  /** Backend i's match in blocks, from the memo when this decision already computed it. */
  matchedOn(i: number, blocks: readonly BlockKey[]): number {
    if (blocks === this.memoBlocks) return this.memo[i]!;
    const anchors = this.anchors(blocks);
    return anchors.length === 0 ? 0 : this.affinity[i]!.matched(anchors) * this.indexStride;
  }

  /** The keys the index holds for a request: every indexStride-th block key (all of them at stride 1). */
  anchors(blocks: readonly BlockKey[]): readonly BlockKey[] {
    const s = this.indexStride;
    if (s === 1) return blocks;
    if (blocks === this.anchorsFor) return this.anchorsMemo;
    const out = new Array<BlockKey>(Math.floor(blocks.length / s));
    for (let a = 0; a < out.length; a++) out[a] = blocks[(a + 1) * s - 1]!;
    this.anchorsFor = blocks;
    this.anchorsMemo = out;
    return out;
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
