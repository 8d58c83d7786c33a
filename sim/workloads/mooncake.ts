/**
 * The Mooncake trace format (kvcache-ai/Mooncake, FAST'25 release):
 *   {"timestamp": ms, "input_length": n, "output_length": m, "hash_ids": [..]}
 * Each hash id is a 512-token block; the last may be partial:
 * its tokens = input_length − 512·(ids − 1).
 */
import type { Segment, WorkloadRequest } from "./types";

export const MOONCAKE_BLOCK_TOKENS = 512;

export interface MooncakeRecord {
  readonly timestamp: number;
  readonly input_length: number;
  readonly output_length: number;
  readonly hash_ids: readonly number[];
}

function isNonNegInt(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 0;
}

/** True when the object has the Mooncake shape (used to detect the format of a line). */
export function looksLikeMooncake(o: Record<string, unknown>): boolean {
  return "hash_ids" in o;
}

/** A request from one parsed line, or a reason it is malformed. */
export function mooncakeRequest(o: Record<string, unknown>): WorkloadRequest | string {
  const { timestamp, input_length, output_length, hash_ids } = o;
  if (typeof timestamp !== "number" || !Number.isFinite(timestamp) || timestamp < 0)
    return "timestamp must be a non-negative number (ms)";
  if (!isNonNegInt(input_length) || input_length < 1) return "input_length must be a positive integer";
  if (!isNonNegInt(output_length)) return "output_length must be a non-negative integer";
  if (!Array.isArray(hash_ids) || hash_ids.length === 0) return "hash_ids must be a non-empty array";
  if (!hash_ids.every((h) => isNonNegInt(h) && h < 2 ** 53)) return "hash_ids must be non-negative integers";
  const full = MOONCAKE_BLOCK_TOKENS * (hash_ids.length - 1);
  const last = input_length - full;
  if (last < 1 || last > MOONCAKE_BLOCK_TOKENS)
    return `input_length ${input_length} does not fit ${hash_ids.length} blocks of ${MOONCAKE_BLOCK_TOKENS}`;
  const segments: Segment[] = hash_ids.map((id: number, i) => ({
    key: `mc/${id}`,
    tokens: i === hash_ids.length - 1 ? last : MOONCAKE_BLOCK_TOKENS,
  }));
  return {
    arrivalMs: timestamp,
    promptTokens: input_length,
    outputTokens: output_length,
    prompt: { kind: "segments", segments },
  };
}
