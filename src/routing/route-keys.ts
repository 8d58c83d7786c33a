/**
 * What of a request's block keys crosses the route call: only the keys the
 * routing core reads. The Worker hashes every 16-token block of the prefix
 * (512 keys for 8k tokens); the Router and its policies read
 * - the keys its affinity index keeps: every indexStride-th (fleet-state.ts
 *   anchors(): blocks s−1, 2s−1, …, one per 64 tokens);
 * - prefix_aware's divergence key, the block right after the longest cached
 *   prefix, which is a multiple of the stride: blocks s, 2s, …;
 * - the ring keys of a new prefix: a leading block (prefix_aware's first 64
 *   tokens, consistent_hash's RING_KEY_BLOCKS), or the last block of a
 *   shorter prompt: the first `lead` blocks;
 * - how many blocks there are.
 * So about 2 keys in s travel (258 of 512 at 8k tokens), as a Float64Array
 * (8 bytes a key, copied in one piece, where an array of numbers costs a
 * tagged value and an allocation per key), and the RouterDO rebuilds a
 * blocks array with those positions filled (NaN elsewhere: no key). The
 * decisions are the same as with every key (route-keys.test.ts checks it
 * for every policy); a policy that starts reading another position must add
 * it here.
 */
import { RING_KEY_BLOCKS } from "./placement";
import { DEFAULT_RING_KEY_TOKENS } from "./policies/prefix-aware";
import type { BlockKey } from "./types";

/** A request's keys as they cross the route call. */
export interface RouteKeys {
  /** Blocks the request has (full blocks of its keyed prefix). */
  readonly count: number;
  /** The keys at keptPositions(count, …), in order. */
  readonly kept: Float64Array;
}

/** Leading blocks every ring key lies in. */
function leadBlocks(blockTokens: number): number {
  return Math.max(RING_KEY_BLOCKS, Math.ceil(DEFAULT_RING_KEY_TOKENS / blockTokens));
}

/** Whether the routing core reads block j of a request (stride s, `lead` leading blocks). */
function isKept(j: number, stride: number, lead: number): boolean {
  return j < lead || (j + 1) % stride === 0 || j % stride === 0;
}

/** The positions the routing core reads of a request of `count` blocks. */
export function keptPositions(count: number, blockTokens: number, stride: number): number[] {
  const lead = leadBlocks(blockTokens);
  const out: number[] = [];
  for (let j = 0; j < count; j++) if (isKept(j, stride, lead)) out.push(j);
  return out;
}

/** The Worker's side: the keys of `blocks` the routing core reads. */
export function routeKeys(blocks: readonly BlockKey[], blockTokens: number, stride: number): RouteKeys {
  const positions = keptPositions(blocks.length, blockTokens, stride);
  const kept = new Float64Array(positions.length);
  for (let i = 0; i < positions.length; i++) kept[i] = blocks[positions[i]!]!;
  return { count: blocks.length, kept };
}

/** The RouterDO's side: a blocks array with the kept positions filled, NaN (no key) elsewhere. */
export function blocksOf(keys: RouteKeys, blockTokens: number, stride: number): BlockKey[] {
  const positions = keptPositions(keys.count, blockTokens, stride);
  if (positions.length !== keys.kept.length)
    throw new RangeError(`route keys: ${keys.kept.length} keys for ${positions.length} positions`);
  const blocks = new Array<BlockKey>(keys.count).fill(Number.NaN);
  for (let i = 0; i < positions.length; i++) blocks[positions[i]!] = keys.kept[i]!;
  return blocks;
}
