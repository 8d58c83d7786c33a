/**
 * The prefill a backend still owes our in-flight requests of one shared prefix: per backend and reuse key
 * (the key of the last block a request's match there ended at, as ./shared-prefixes.ts counts them), the
 * uncached tokens of each such request until its predicted prefill end (the cost model's slot), or its
 * completion, whichever is first.
 *
 * prefix_aware reads it for the floor of its request cap on shared prefixes (policies/prefix-aware.ts):
 * a backend whose queued prefill for a prefix's requests is less than one prefill of the prefix elsewhere
 * batches the next of them sooner than a new replica computes the prefix, so moving it costs a full
 * prefill for no gain in time to first token (bench/results/policy-work.md, "Tail gaps": gsp MoE's slowest
 * 1% were such spills). An engine batches the suffixes of a prefix's waiting requests in one step (vLLM V1
 * chunked prefill schedules up to its token budget per step, the shared blocks computed once), so what the
 * next one waits for there is their suffixes, not their number.
 */
import type { BlockKey } from "./types";

interface Owed {
  /** Uncached tokens the request prefills. */
  readonly tokens: number;
  /** Predicted end of its prefill (ms). */
  readonly end: number;
}

export class SharedPrefill {
  /** Per backend: reuse key → our in-flight requests there whose match ended at it, with what they prefill. */
  private byBackend: Map<BlockKey, Owed[]>[] = [];
  /** Bumped by every reset: a request added before it is not taken off the new lists. */
  private generation = 0;

  /** Forgets everything: the backend list changed, indices mean other backends. */
  reset(size: number): void {
    this.byBackend = Array.from({ length: size }, () => new Map<BlockKey, Owed[]>());
    this.generation++;
  }

  /** A request whose match on backend i ended at `key` prefills `tokens` until `end`; returns the generation to remove it with. */
  add(i: number, key: BlockKey, tokens: number, end: number): number {
    const m = this.byBackend[i];
    if (m !== undefined) {
      const list = m.get(key);
      if (list === undefined) m.set(key, [{ tokens, end }]);
      else list.push({ tokens, end });
    }
    return this.generation;
  }

  /** That request completed (or failed): the arguments add had, and what it returned. */
  remove(i: number, key: BlockKey, tokens: number, end: number, generation: number): void {
    if (generation !== this.generation) return;
    const m = this.byBackend[i];
    const list = m?.get(key);
    if (m === undefined || list === undefined) return;
    const at = list.findIndex((o) => o.tokens === tokens && o.end === end);
    if (at < 0) return;
    list.splice(at, 1);
    if (list.length === 0) m.delete(key);
  }

  /** Uncached tokens backend i is still predicted to prefill at `now` for our requests whose match there ended at `key`. */
  queuedTokens(i: number, key: BlockKey, now: number): number {
    const list = this.byBackend[i]?.get(key);
    if (list === undefined) return 0;
    let sum = 0;
    for (const o of list) if (o.end > now) sum += o.tokens;
    return sum;
  }
}
