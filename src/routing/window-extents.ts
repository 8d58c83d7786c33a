/**
 * How far past the gateway's key window a backend has computed a prompt.
 *
 * The Worker keys only a prompt's first PREFIX_TOKENS tokens, so the affinity
 * index cannot tell a backend that holds a 100k-token conversation from one
 * that holds its first 32k: both match the whole window, and the rest looked
 * uncached everywhere. Yet the engine caches every full block of a prompt it
 * computes (vLLM V1, `vllm/v1/core/kv_cache_manager.py`), and a conversation's
 * next turn repeats the previous prompt before adding to it. So for each
 * backend and each window-end key (the last key of a prompt cut by the
 * window) this keeps the length of the last prompt of ours that ended its
 * window there: the backend computed that far. A later prompt that matches
 * the whole window there is expected cached up to min(that length, its own),
 * an estimate, as the index is one: `cached_tokens` of its completion tells
 * the truth, and the length recorded is then the prompt's own (the backend
 * has just computed it all). Measured cause: bench/results/policy-work.md,
 * "Hit gaps".
 *
 * An entry is read only while the index still matches the whole window on
 * that backend (an evicted window is never consulted); entries are kept per
 * backend in least-recently-noted order, at most its KV capacity in blocks
 * of the block size each note is made at (a backend cannot hold more
 * distinct window-end blocks than it has blocks). Memory: a
 * Map entry of two numbers, some 40–50 bytes, so at most ~1.2 MB for a
 * 442k-token backend at 16-token blocks, and only after that many distinct
 * prompts longer than the window were routed there; nothing for prompts
 * within it.
 */
import type { BlockKey } from "./types";

export class WindowExtents {
  private byBackend: Map<BlockKey, number>[] = [];
  private capacities: number[] = [];

  /** One empty map per backend; `capacityTokens[i]`, backend i's KV capacity, bounds its (see note). */
  reset(capacityTokens: readonly number[]): void {
    for (const c of capacityTokens)
      if (!(c > 0) || !Number.isFinite(c)) throw new RangeError(`capacityTokens: must be > 0, got ${c}`);
    this.byBackend = capacityTokens.map(() => new Map());
    this.capacities = [...capacityTokens];
  }

  /**
   * Backend i has computed a prompt of `promptTokens` tokens whose window ends with `key`, in blocks of
   * `blockTokens`: backend i then keeps at most its capacity in such blocks (at least one entry).
   */
  note(i: number, key: BlockKey, promptTokens: number, blockTokens: number): void {
    const m = this.byBackend[i];
    if (m === undefined || !(promptTokens > 0)) return;
    m.delete(key);
    m.set(key, promptTokens);
    if (m.size > Math.max(1, Math.ceil(this.capacities[i]! / blockTokens)))
      m.delete(m.keys().next().value as BlockKey);
  }

  /** The length of the last prompt backend i computed whose window ended with `key`; undefined if none known. */
  extent(i: number, key: BlockKey): number | undefined {
    return this.byBackend[i]?.get(key);
  }

  /** Entries held for backend i (for tests and stats). */
  size(i: number): number {
    return this.byBackend[i]?.size ?? 0;
  }
}

/**
 * The tokens of a request expected cached on a backend that matched `matched` of its `blocks.length` keys:
 * the match, and, when the match covers every key and the prompt runs at least a block past them (the window
 * cut it), up to `extent` — what that backend is known to have computed past the window — within the prompt.
 */
export function expectedCachedTokens(
  promptTokens: number,
  keys: number,
  matched: number,
  blockTokens: number,
  extent: number | undefined,
): number {
  const inWindow = matched * blockTokens;
  if (extent === undefined || matched < keys || !cutByWindow(promptTokens, keys, blockTokens))
    return inWindow;
  return Math.max(inWindow, Math.min(extent, promptTokens));
}

/** Whether a request's keys were cut by the window: it runs at least one whole block past its last key. */
export function cutByWindow(promptTokens: number, keys: number, blockTokens: number): boolean {
  return keys > 0 && promptTokens - keys * blockTokens >= blockTokens;
}
