/**
 * Segments → pseudo token ids, and requests → block keys.
 *
 * Token j of a segment is a hash of (segment key, j), so equal keys give equal
 * tokens and a shorter segment with the same key is a prefix of the longer one
 * (the Mooncake trace's partial last block relies on this). Ids stay below a
 * 200k vocabulary, the size of o200k_base, so they look like real token ids.
 * The end-to-end replay needs text instead: segment-text.ts turns the same
 * segments into words with one o200k token each, preserving the prefix structure.
 */
import { blockKeysFromTokens, type ChainSeed, chainSeed, shortPromptKey } from "../../src/prefix/block-keys";
import { SETTINGS } from "../../src/routing/defaults";
import type { BlockKey } from "../../src/routing/types";
import { hashString } from "./prng";
import type { Segment, WorkloadRequest } from "./types";

const VOCAB = 200_000;
/**
 * Tokens per block of the generated workloads and of OpenAI logs: the
 * gateway's default BLOCK_TOKENS (vLLM's block size). Mooncake traces come
 * in their own blocks of 512.
 */
export const DEFAULT_BLOCK_TOKENS = SETTINGS.BLOCK_TOKENS.default;
/** Model name the simulator assumes when a request names none (one pool). */
export const DEFAULT_MODEL = "default";

function tokenAt(keyHash: number, j: number): number {
  let h = (keyHash ^ Math.imul(j + 1, 0x9e3779b1)) | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) % VOCAB;
}

function writeSegment(out: Uint32Array, at: number, segment: Segment): void {
  const keyHash = hashString(segment.key);
  for (let j = 0; j < segment.tokens; j++) out[at + j] = tokenAt(keyHash, j);
}

/** Deterministic pseudo token ids of one segment. */
export function segmentTokens(segment: Segment): Uint32Array {
  const out = new Uint32Array(segment.tokens);
  writeSegment(out, 0, segment);
  return out;
}

/** All prompt token ids of a request (segments expanded, or the real ids). */
export function requestTokens(req: WorkloadRequest): Uint32Array {
  if (req.prompt.kind === "tokens") return req.prompt.tokens;
  const out = new Uint32Array(req.prompt.segments.reduce((n, s) => n + s.tokens, 0));
  let at = 0;
  for (const s of req.prompt.segments) {
    writeSegment(out, at, s);
    at += s.tokens;
  }
  return out;
}

const seeds = new Map<string, ChainSeed>();
function seedFor(req: WorkloadRequest): ChainSeed {
  const id = `${req.model ?? DEFAULT_MODEL}\u0000${req.tenant ?? ""}`;
  let s = seeds.get(id);
  if (s === undefined) {
    s = chainSeed(req.model ?? DEFAULT_MODEL, req.tenant);
    seeds.set(id, s);
  }
  return s;
}

// Keys are computed once per request and block size, then shared by every policy run.
const keyCache = new WeakMap<WorkloadRequest, Map<number, readonly BlockKey[]>>();

/**
 * Chained keys of every full block of the request's prompt (blocks of
 * `blockTokens`), seeded by model and tenant the same way the gateway seeds
 * them. Memoized per request object.
 */
export function requestBlockKeys(req: WorkloadRequest, blockTokens: number): readonly BlockKey[] {
  let perSize = keyCache.get(req);
  if (perSize === undefined) {
    perSize = new Map();
    keyCache.set(req, perSize);
  }
  let keys = perSize.get(blockTokens);
  if (keys === undefined) {
    keys = blockKeysFromTokens(requestTokens(req), seedFor(req), blockTokens);
    perSize.set(blockTokens, keys);
  }
  return keys;
}

/**
 * The key the gateway gives a prompt with no full block in its first
 * `maxTokens` tokens (src/prefix/block-keys.ts shortPromptKey, seeded as the
 * gateway seeds it); undefined when it has a full block or no token.
 */
export function requestPromptKey(
  req: WorkloadRequest,
  blockTokens: number,
  maxTokens: number,
): BlockKey | undefined {
  const tokens = requestTokens(req);
  const keyed = tokens.subarray(0, Math.min(tokens.length, maxTokens));
  if (keyed.length === 0 || keyed.length >= blockTokens) return undefined;
  return shortPromptKey(keyed, seedFor(req));
}
