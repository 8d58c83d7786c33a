/**
 * The approximate radix tree of SGLang's model gateway (`cache_aware` policy),
 * re-implemented over block keys instead of characters.
 *
 * Source: sgl-project/sglang, sgl-model-gateway/src/policies/tree.rs (see
 * SOURCES.md). One tree is shared by all workers ("tenants"); every node
 * records which tenants were sent that prefix and when each last ended a
 * request there. Matching walks the tree as far as the request agrees with
 * anything sent before and then names ONE tenant of the deepest node reached.
 * Each tenant's size is bounded by periodic LRU eviction of its leaves.
 *
 * Units: the Rust tree stores characters and compresses runs into nodes; here
 * one node is one block (our chained keys make a block sequence behave like a
 * string whose characters are blocks). Timestamps are assigned so that every
 * block of a would-be compressed node carries that node's timestamp, which
 * keeps the eviction order of the original; only the granularity differs
 * (we can stop evicting in the middle of what would be one compressed node).
 */

import type { BlockKey } from "../../src/routing/types";
import { Heap } from "../heap";

interface TreeNode {
  readonly key: BlockKey;
  readonly parent: TreeNode | null;
  readonly children: Map<BlockKey, TreeNode>;
  /** tenant → epoch of its last access that ended at this node (0 = only passed through). */
  readonly tenants: Map<string, number>;
  /** tree.rs caches the creating tenant per node and answers matches with it while it is present. */
  lastTenant: string | undefined;
}

export interface PrefixMatch {
  /** Blocks of the request matched by the tree (by any tenant). */
  readonly matchedBlocks: number;
  /** The tenant named for the deepest matched node; undefined when the tree is empty. */
  readonly tenant: string | undefined;
}

/** A leaf of one tenant, queued for eviction by its access stamp. */
interface LeafEntry {
  readonly ts: number;
  readonly seq: number;
  readonly node: TreeNode;
  readonly tenant: string;
}

export class SglangTree {
  private readonly root: TreeNode = {
    key: Number.NaN,
    parent: null,
    children: new Map(),
    tenants: new Map(),
    lastTenant: undefined,
  };
  /** Blocks held per tenant (tree.rs `tenant_char_count`, in blocks). */
  private readonly sizes = new Map<string, number>();
  /** tree.rs uses a global monotonically increasing epoch instead of wall time. */
  private epoch = 0;

  private nextEpoch(): number {
    return this.epoch++;
  }

  tenantSize(tenant: string): number {
    return this.sizes.get(tenant) ?? 0;
  }

  tenantNames(): string[] {
    return [...this.sizes.keys()];
  }

  private addSize(tenant: string, delta: number): void {
    this.sizes.set(tenant, (this.sizes.get(tenant) ?? 0) + delta);
  }

  /** Records that `blocks` were sent to `tenant` (tree.rs `insert`). */
  insert(blocks: readonly BlockKey[], tenant: string): void {
    if (!this.root.tenants.has(tenant)) this.root.tenants.set(tenant, 0);
    if (!this.sizes.has(tenant)) this.sizes.set(tenant, 0);

    let prev = this.root;
    for (let i = 0; i < blocks.length; i++) {
      const key = blocks[i]!;
      const child = prev.children.get(key);
      if (child === undefined) {
        // The whole remainder becomes one new leaf in tree.rs: one timestamp for all of it.
        const epoch = this.nextEpoch();
        for (let j = i; j < blocks.length; j++) {
          const node: TreeNode = {
            key: blocks[j]!,
            parent: prev,
            children: new Map(),
            tenants: new Map([[tenant, epoch]]),
            lastTenant: tenant,
          };
          prev.children.set(node.key, node);
          prev = node;
        }
        this.addSize(tenant, blocks.length - i);
        return;
      }
      // Passing through: join the node without refreshing its timestamp.
      if (!child.tenants.has(tenant)) {
        child.tenants.set(tenant, 0);
        this.addSize(tenant, 1);
      }
      prev = child;
    }
    // The request ended on an existing node: that node is the tenant's freshest leaf.
    prev.tenants.set(tenant, this.nextEpoch());
  }

  /**
   * tree.rs `prefix_match_with_counts`: longest match against everything in
   * the tree, the tenant cached on the deepest node, and (1 time in 8, by
   * the epoch counter) a refresh of that tenant's timestamp there.
   */
  prefixMatch(blocks: readonly BlockKey[]): PrefixMatch {
    let curr = this.root;
    let matched = 0;
    for (const key of blocks) {
      const child = curr.children.get(key);
      if (child === undefined) break;
      curr = child;
      matched++;
    }
    let tenant = curr.lastTenant;
    if (tenant === undefined || !curr.tenants.has(tenant)) {
      tenant = curr.tenants.keys().next().value;
      curr.lastTenant = tenant;
    }
    const epoch = this.nextEpoch();
    if ((epoch & 0x7) === 0 && tenant !== undefined && curr.tenants.has(tenant)) {
      curr.tenants.set(tenant, epoch);
    }
    return { matchedBlocks: matched, tenant };
  }

  /** Longest prefix of `blocks` this tenant holds. Read-only: what the tree holds, for tests. */
  tenantMatch(blocks: readonly BlockKey[], tenant: string): number {
    let curr = this.root;
    let matched = 0;
    for (const key of blocks) {
      const child = curr.children.get(key);
      if (child === undefined || !child.tenants.has(tenant)) break;
      curr = child;
      matched++;
    }
    return matched;
  }

  private isLeafOf(node: TreeNode, tenant: string): boolean {
    if (!node.tenants.has(tenant)) return false;
    for (const child of node.children.values()) if (child.tenants.has(tenant)) return false;
    return true;
  }

  /** Drops `tenant` from a node and prunes the node if nobody holds it any more. */
  private detach(node: TreeNode, tenant: string): void {
    node.tenants.delete(tenant);
    if (node.tenants.size === 0 && node.children.size === 0 && node.parent !== null) {
      node.parent.children.delete(node.key);
    }
  }

  /**
   * tree.rs `evict_tenant_by_size`: per tenant, remove least recently used
   * leaves until it holds at most `maxBlocks` blocks. The root is never evicted.
   */
  evictBySize(maxBlocks: number): void {
    // Least recently used first; equal stamps in the order pushed (Rust's BinaryHeap leaves it unspecified).
    let seq = 0;
    const heap = new Heap<LeafEntry>((a, b) => a.ts < b.ts || (a.ts === b.ts && a.seq < b.seq));
    const stack: TreeNode[] = [...this.root.children.values()];
    while (stack.length > 0) {
      const node = stack.pop()!;
      for (const child of node.children.values()) stack.push(child);
      for (const [tenant, ts] of node.tenants) {
        if (this.isLeafOf(node, tenant)) heap.push({ ts, seq: seq++, node, tenant });
      }
    }
    for (let entry = heap.pop(); entry !== undefined; entry = heap.pop()) {
      const { node, tenant } = entry;
      if (this.tenantSize(tenant) <= maxBlocks) continue;
      if (!this.isLeafOf(node, tenant)) continue;
      this.addSize(tenant, -1);
      this.detach(node, tenant);
      const parent = node.parent;
      if (parent !== null && parent !== this.root && this.isLeafOf(parent, tenant)) {
        heap.push({ ts: parent.tenants.get(tenant)!, seq: seq++, node: parent, tenant });
      }
    }
  }

  /** tree.rs `remove_tenant`: forget a worker entirely (it left the fleet). */
  removeTenant(tenant: string): void {
    const stack: TreeNode[] = [...this.root.children.values()];
    const holders: TreeNode[] = [];
    while (stack.length > 0) {
      const node = stack.pop()!;
      for (const child of node.children.values()) stack.push(child);
      if (node.tenants.has(tenant)) holders.push(node);
    }
    // Deepest first, so pruning a child can leave its parent prunable.
    holders.reverse();
    for (const node of holders) this.detach(node, tenant);
    this.root.tenants.delete(tenant);
    this.sizes.delete(tenant);
  }
}
