/**
 * A loggable digest of a request's block-key chain: every k-th chained key,
 * its top 32 bits as 8 hex digits, concatenated. Because each key folds in
 * everything before it, two digests with the same hex at position j share
 * their first (j + 1) · `prefixEvery` tokens (up to a 2^-32 chance per pair
 * of a false match), and no text can be read back from them. This is what
 * `prefix-gateway analyze` reads from the gateway's request log lines to
 * measure shared prefixes without ever seeing a prompt.
 *
 * Bounded whatever the configuration: at most DIGEST_MAX_KEYS keys (1 KiB of
 * hex), spaced at least DIGEST_EVERY_TOKENS apart. The spacing depends only
 * on BLOCK_TOKENS and PREFIX_TOKENS, never on the request, so every line of a
 * deployment samples the same positions. With 16-token blocks and 8192 keyed
 * tokens that is every 4th block: one key per 64 tokens, the resolution of
 * the RouterDO's own affinity index; with the default 32768 keyed tokens,
 * every 16th block (256 tokens).
 *
 * Both sides live here, the writer (the Worker) and the reader (the
 * analyzer), so the format has one definition.
 */
import type { BlockKey } from "./block-keys";

/** Tokens between two logged keys, at least. */
export const DIGEST_EVERY_TOKENS = 64;
/** Keys in one digest, at most. */
export const DIGEST_MAX_KEYS = 128;
const HEX_PER_KEY = 8;
const TWO_POW_21 = 0x200000;

/** The log fields of a digest (names as they appear in the request log line). */
export interface ChainDigest {
  /** Concatenated 8-hex-digit keys, one per `prefixEvery` tokens from the start of the prompt. */
  readonly prefixKeys: string;
  /** Tokens covered by each key of `prefixKeys`. */
  readonly prefixEvery: number;
}

/** Blocks between two logged keys, from the deployment's settings alone. */
export function digestStrideBlocks(blockTokens: number, prefixTokens: number): number {
  if (!Number.isInteger(blockTokens) || blockTokens < 1)
    throw new RangeError(`blockTokens must be a positive integer, got ${blockTokens}`);
  const bySpacing = Math.ceil(DIGEST_EVERY_TOKENS / blockTokens);
  const byCap = Math.ceil(Math.floor(prefixTokens / blockTokens) / DIGEST_MAX_KEYS);
  return Math.max(1, bySpacing, byCap);
}

/** The top 32 bits of a 53-bit block key (keyOf puts the chain state's high half there). */
function hex8(key: BlockKey): string {
  return (Math.floor(key / TWO_POW_21) >>> 0).toString(16).padStart(HEX_PER_KEY, "0");
}

/** The digest of a request's chained block keys (as prefixKeysForRequest returns them). */
export function chainDigest(
  blocks: readonly BlockKey[],
  blockTokens: number,
  prefixTokens: number,
): ChainDigest {
  const stride = digestStrideBlocks(blockTokens, prefixTokens);
  let prefixKeys = "";
  for (let i = stride - 1, n = 0; i < blocks.length && n < DIGEST_MAX_KEYS; i += stride, n++)
    prefixKeys += hex8(blocks[i]!);
  return { prefixKeys, prefixEvery: stride * blockTokens };
}

/** A digest read back: the keys as uint32s, and the tokens each one covers. */
export interface DigestKeys {
  readonly keys: number[];
  readonly every: number;
}

const HEX = /^[0-9a-f]*$/;

/** Reads the digest fields of a parsed log line; a string says why they are unusable. */
export function readChainDigest(line: {
  readonly prefixKeys?: unknown;
  readonly prefixEvery?: unknown;
}): DigestKeys | string {
  const { prefixKeys, prefixEvery } = line;
  if (typeof prefixKeys !== "string") return "no prefixKeys (a line from before the gateway logged them?)";
  if (typeof prefixEvery !== "number" || !Number.isInteger(prefixEvery) || prefixEvery < 1)
    return "prefixEvery must be a positive integer";
  if (prefixKeys.length % HEX_PER_KEY !== 0 || prefixKeys.length > DIGEST_MAX_KEYS * HEX_PER_KEY)
    return `prefixKeys must be at most ${DIGEST_MAX_KEYS} keys of ${HEX_PER_KEY} hex digits`;
  if (!HEX.test(prefixKeys)) return "prefixKeys must be lowercase hex";
  const keys: number[] = new Array(prefixKeys.length / HEX_PER_KEY);
  for (let j = 0; j < keys.length; j++)
    keys[j] = Number.parseInt(prefixKeys.slice(j * HEX_PER_KEY, (j + 1) * HEX_PER_KEY), 16);
  return { keys, every: prefixEvery };
}
