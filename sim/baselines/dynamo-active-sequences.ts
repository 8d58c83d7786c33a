/**
 * NVIDIA Dynamo's per-worker accounting of the requests the router has in
 * flight (`ActiveSequences`), which gives its cost function the "active
 * blocks" and "active prefill tokens" of each worker.
 *
 * Source: ai-dynamo/dynamo lib/llm/src/kv_router/sequence.rs (see SOURCES.md).
 * With the defaults (router_track_active_blocks = true,
 * router_assume_kv_reuse = true, router_track_output_blocks = false):
 * - a request holds references on its prompt's block hashes; a worker's
 *   active blocks = distinct hashes referenced (shared prefixes count once);
 * - a request adds isl − overlap × block_size prefill tokens until its
 *   prefill completes (first token) or it is freed.
 */

import type { BlockKey } from "../../src/routing/types";

export class ActiveSequences {
  private readonly refs = new Map<BlockKey, number>();
  /**
   * Blocks of prompts we were given no keys for (none when the caller
   * passes every block, as the simulator does): unique per request, so they
   * add to the count and never dedupe.
   */
  private uncappedBlocks = 0;
  private prefillTokens = 0;

  activeBlocks(): number {
    return this.refs.size + this.uncappedBlocks;
  }

  activeTokens(): number {
    return this.prefillTokens;
  }

  /** sequence.rs `new_blocks`: request blocks not already active on this worker. */
  newBlocks(blocks: readonly BlockKey[], uncapped: number): number {
    let n = uncapped;
    for (const b of blocks) if (!this.refs.has(b)) n++;
    return n;
  }

  add(blocks: readonly BlockKey[], uncapped: number, prefillTokens: number): void {
    for (const b of blocks) this.refs.set(b, (this.refs.get(b) ?? 0) + 1);
    this.uncappedBlocks += uncapped;
    this.prefillTokens += prefillTokens;
  }

  completePrefill(prefillTokens: number): void {
    this.prefillTokens -= prefillTokens;
  }

  free(blocks: readonly BlockKey[], uncapped: number): void {
    for (const b of blocks) {
      const n = this.refs.get(b);
      if (n === undefined) continue;
      if (n <= 1) this.refs.delete(b);
      else this.refs.set(b, n - 1);
    }
    this.uncappedBlocks -= uncapped;
  }
}
