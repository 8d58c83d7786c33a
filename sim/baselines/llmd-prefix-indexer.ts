/**
 * llm-d / Gateway API Inference Extension prefix indexer: the router's own
 * estimate of which pod holds which prefix block.
 *
 * Source: kubernetes-sigs/gateway-api-inference-extension
 * pkg/epp/scheduling/framework/plugins/prefixcachescorer/indexer.go and
 * plugin.go (see SOURCES.md). A block hash maps to the set of pods it was
 * sent to; each pod has an LRU of its block hashes whose capacity is the
 * pod's number of GPU KV blocks (AutoTune, on by default) and whose eviction
 * removes the pod from that hash's set.
 */

import type { BlockKey } from "../../src/routing/types";
import { LruSet } from "./lru-set";

export class LlmdPrefixIndexer {
  private readonly hashToPods = new Map<BlockKey, Set<string>>();
  private readonly podToLru = new Map<string, LruSet>();

  /** indexer.go `Add`: the LRU is sized once, when the pod is first seen. */
  add(hashes: readonly BlockKey[], pod: string, gpuBlocks: number): void {
    let lru = this.podToLru.get(pod);
    if (lru === undefined) {
      lru = new LruSet(Math.max(1, Math.floor(gpuBlocks)), (hash) => this.forget(hash, pod));
      this.podToLru.set(pod, lru);
    }
    for (const hash of hashes) lru.add(hash);
    for (const hash of hashes) {
      // A hash evicted by this same call is re-listed, as the Go code does (it updates the map after the LRU).
      let pods = this.hashToPods.get(hash);
      if (pods === undefined) {
        pods = new Set();
        this.hashToPods.set(hash, pods);
      }
      pods.add(pod);
    }
  }

  private forget(hash: BlockKey, pod: string): void {
    const pods = this.hashToPods.get(hash);
    if (pods === undefined) return;
    pods.delete(pod);
    if (pods.size === 0) this.hashToPods.delete(hash);
  }

  /**
   * plugin.go `matchLongestPrefix`: walk the hashes in order, stop at the
   * first one NO pod has, and count for each pod how many of the walked
   * hashes it has.
   */
  matchLongestPrefix(hashes: readonly BlockKey[]): Map<string, number> {
    const res = new Map<string, number>();
    for (const hash of hashes) {
      const pods = this.hashToPods.get(hash);
      if (pods === undefined || pods.size === 0) break;
      for (const pod of pods) res.set(pod, (res.get(pod) ?? 0) + 1);
    }
    return res;
  }

  removePod(pod: string): void {
    const lru = this.podToLru.get(pod);
    if (lru === undefined) return;
    lru.clear();
    this.podToLru.delete(pod);
  }

  pods(): string[] {
    return [...this.podToLru.keys()];
  }

  lruSize(pod: string): number {
    return this.podToLru.get(pod)?.size ?? 0;
  }
}
