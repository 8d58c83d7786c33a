/**
 * Prefix keys: a prompt's token ids → chained block keys.
 *
 *   h_0 = seed(model, tenant)
 *   h_i = H(h_{i-1}, tokens of block i)        (only full blocks)
 *
 * Because each key folds in everything before it, equal keys at position i
 * mean equal prefixes up to block i: a backend's cache can be matched block
 * by block without storing tokens. The seed separates models and tenants, so
 * two tenants never share a chain (prompt_cache_key isolation).
 *
 * H runs two 32-bit multiply-rotate lanes (MurmurHash3's mixing steps,
 * Appleby, public domain) with Math.imul: 64 bits of chain state without
 * BigInt. The key handed out is the top 53 bits, an exact JS number.
 */

/** The key of one full block: an exact integer below 2^53 (the routing core's BlockKey). */
export type BlockKey = number;

/** 64 bits of chain state, as two unsigned 32-bit halves. */
export interface ChainSeed {
  readonly hi: number;
  readonly lo: number;
}

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;
const D1 = 0x85ebca77;
const D2 = 0xc2b2ae3d;
const TWO_POW_21 = 0x200000;

/**
 * MurmurHash3's 32-bit finaliser. The routing core has the same function
 * (src/routing/hash.ts) for ring placement; each keeps its own copy because
 * neither layer imports the other, and block-keys.test.ts pins the keys.
 */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

/** Mutable state for one block's mixing; reused to avoid allocation on the hot path. */
class Lanes {
  a = 0;
  b = 0;
  n = 0;

  start(seed: ChainSeed): void {
    this.a = seed.hi | 0;
    this.b = seed.lo | 0;
    this.n = 0;
  }

  /** Mixes one 32-bit word into both lanes (different constants: the lanes stay independent). */
  word(w: number): void {
    let k = Math.imul(w, C1);
    k = rotl(k, 15);
    k = Math.imul(k, C2);
    this.a ^= k;
    this.a = rotl(this.a, 13);
    this.a = (Math.imul(this.a, 5) + 0xe6546b64) | 0;

    let m = Math.imul(w ^ 0x9e3779b9, D1);
    m = rotl(m, 17);
    m = Math.imul(m, D2);
    this.b ^= m;
    this.b = rotl(this.b, 11);
    this.b = (Math.imul(this.b, 9) + 0x7f4a7c15) | 0;
    this.n++;
  }

  /** Finalises into the next chain state; the lanes are cross-mixed so each half depends on all input. */
  finish(): ChainSeed {
    let a = this.a ^ this.n;
    let b = this.b ^ Math.imul(this.n, 0x27d4eb2f);
    a = (a + b) | 0;
    b = (b + a) | 0;
    a = fmix32(a);
    b = fmix32(b);
    a = (a + b) | 0;
    b = (b + a) | 0;
    return { hi: a >>> 0, lo: b >>> 0 };
  }
}

const lanes = new Lanes();

/** The 53-bit key of a chain state: all 32 high bits and the top 21 of the low half. */
export function keyOf(state: ChainSeed): BlockKey {
  return state.hi * TWO_POW_21 + (state.lo >>> 11);
}

function mixString(s: string): void {
  lanes.word(s.length);
  for (let i = 0; i < s.length; i++) lanes.word(s.charCodeAt(i));
}

/**
 * The chain's starting state for a model pool and an optional tenant key.
 * Tenants with different keys (or none) get unrelated chains.
 */
export function chainSeed(model: string, tenant?: string): ChainSeed {
  lanes.start({ hi: 0x70726566, lo: 0x69786777 });
  mixString(model);
  if (tenant !== undefined && tenant !== "") {
    lanes.word(0x74656e61);
    mixString(tenant);
  }
  return lanes.finish();
}

/**
 * Keys of the full blocks of `tokens`, capped at `maxTokens` (rounded down
 * to whole blocks). A trailing partial block has no key: engines only reuse
 * full blocks.
 */
export function blockKeysFromTokens(
  tokens: ArrayLike<number>,
  seed: ChainSeed,
  blockTokens: number,
  maxTokens: number = Number.POSITIVE_INFINITY,
): BlockKey[] {
  if (!Number.isInteger(blockTokens) || blockTokens < 1)
    throw new RangeError(`blockTokens must be a positive integer, got ${blockTokens}`);
  const usable = Math.min(tokens.length, maxTokens);
  const blocks = Math.floor(usable / blockTokens);
  const keys: BlockKey[] = new Array(blocks);
  let state = seed;
  let t = 0;
  for (let b = 0; b < blocks; b++) {
    lanes.start(state);
    const end = t + blockTokens;
    for (; t < end; t++) lanes.word(tokens[t]! | 0);
    state = lanes.finish();
    keys[b] = keyOf(state);
  }
  return keys;
}

/** Tags the short-prompt key's state apart from every block key's ("shrt"). */
const SHORT_PROMPT_TAG = 0x73687274;

/**
 * The key of a prompt too short for one full block, which has no block keys:
 * a hash of all its tokens, seeded by model and tenant like the chain and
 * tagged apart from block keys. It places the request (its ring position),
 * so different short prompts spread over the fleet and the same one comes
 * back to the same backend; no engine caches a partial block, so it never
 * stands for a cached prefix.
 */
export function shortPromptKey(tokens: ArrayLike<number>, seed: ChainSeed): BlockKey {
  lanes.start(seed);
  lanes.word(SHORT_PROMPT_TAG);
  lanes.word(tokens.length);
  for (let t = 0; t < tokens.length; t++) lanes.word(tokens[t]! | 0);
  return keyOf(lanes.finish());
}

/**
 * Keys for prompts given as ready-made block ids (one id per block, as in the
 * Mooncake trace's hash_ids). Ids are non-negative integers below 2^53.
 */
export function blockKeysFromIds(ids: ArrayLike<number>, seed: ChainSeed): BlockKey[] {
  const keys: BlockKey[] = new Array(ids.length);
  let state = seed;
  for (let b = 0; b < ids.length; b++) {
    const id = ids[b]!;
    lanes.start(state);
    lanes.word(0x626c6f63);
    lanes.word(id >>> 0);
    lanes.word(Math.floor(id / 0x100000000) | 0);
    state = lanes.finish();
    keys[b] = keyOf(state);
  }
  return keys;
}
