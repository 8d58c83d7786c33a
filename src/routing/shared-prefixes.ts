/**
 * Which cached prefixes our in-flight requests are sharing on each backend:
 * for every request, the key of the last block it matched on the backend it
 * went to (where its reuse of that backend's cache ends), counted until it
 * completes.
 *
 * prefix_aware reads it to tell a hot shared prefix from a private one by
 * what the router itself observed, never by a workload's labels. A request
 * whose match on a backend ends at a key that another of our in-flight
 * requests there also reused is riding a shared prefix (a system prompt, a
 * RAG template, a burst of one document): moving it costs one more prefill
 * of that prefix, after which the second backend holds it too and later
 * requests can spread over both (Preble, Srivatsa et al. 2024, replicates
 * hot prefixes this way). A conversation's turn matches through its own
 * history, which no other request in flight reuses; moving it would
 * re-prefill that history on every turn it is moved, so it is not counted
 * as shared and stays home.
 *
 * The bound prefix_aware keeps with it (policies/prefix-aware.ts; tested as
 * an invariant in policies/policy-invariants.test.ts): after every placement
 * that is not a `fallback`, a request whose match on the chosen backend ends
 * at a key another of our in-flight requests there also reused found that
 * backend holding n_i + f_i < max(⌈c · w_i/Σw_healthy · (T + Φ + 1)⌉, F)
 * requests. n_i and T are our own in flight there and in the fleet; f_i is
 * what backend i's engine reading, as the policy holds it when it decides,
 * reports running and waiting beyond ours (foreign-load.ts foreignRequests:
 * 0 when the reading is missing, stale or without ownInflight), Φ = Σ_j f_j
 * over every backend, as T counts ours on every backend.
 * So it bounds every request a backend is serving, ours or not, against its
 * share of all the requests the fleet is known to serve: a backend another
 * client floods has that much less room for a hot prefix's overflow, though
 * it holds few of ours. Without readings (scrape off, stale, or failed)
 * f = Φ = 0 and it is the cap on our own requests alone. It never binds on an
 * idle fleet: no request is in flight to share with, and below F requests a
 * backend takes any.
 */
import type { BlockKey } from "./types";

/**
 * F: below this many requests in flight (ours, plus the foreign ones a fresh engine reading reports) a
 * backend takes any request of a shared prefix, whatever its share of the fleet: a quiet fleet keeps a
 * prefix's concurrent requests on its home instead of prefilling it again elsewhere (with 16 backends the
 * bounded-load cap is 1 while fewer than 12 requests are in flight). SGLang's cache-aware router has the same kind of absolute threshold beside its relative
 * one (balance_abs_threshold, 64 by default, with balance_rel_threshold 1.5). Chosen on the tuning set
 * (bench/results/policy-work.md, "maxLoadRatio: replicate hot prefixes").
 */
export const DEFAULT_SHARED_FLOOR = 8;

export class SharedPrefixes {
  /** Per backend: reuse key → our in-flight requests whose match there ended at it. */
  private byBackend: Map<BlockKey, number>[] = [];
  /** Bumped by every reset: a request counted before it is not taken off the new counts. */
  private generation = 0;

  /** Forgets everything: the backend list changed, indices mean other backends. */
  reset(size: number): void {
    this.byBackend = Array.from({ length: size }, () => new Map<BlockKey, number>());
    this.generation++;
  }

  /** A request whose match on backend i ended at `key` was routed there; returns the generation to remove it with. */
  add(i: number, key: BlockKey): number {
    const m = this.byBackend[i];
    if (m !== undefined) m.set(key, (m.get(key) ?? 0) + 1);
    return this.generation;
  }

  /** That request completed (or failed); `generation` is what add returned. */
  remove(i: number, key: BlockKey, generation: number): void {
    if (generation !== this.generation) return;
    const m = this.byBackend[i];
    const n = m?.get(key);
    if (m === undefined || n === undefined) return;
    if (n <= 1) m.delete(key);
    else m.set(key, n - 1);
  }

  /** Our in-flight requests on backend i whose match there ended at `key`. */
  sharers(i: number, key: BlockKey): number {
    return this.byBackend[i]?.get(key) ?? 0;
  }
}
