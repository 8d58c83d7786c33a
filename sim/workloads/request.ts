import type { Segment, WorkloadRequest } from "./types";

/** A segment-prompt request; promptTokens is the sum of its segments. */
export function segmentRequest(
  arrivalMs: number,
  segments: readonly Segment[],
  outputTokens: number,
  extra?: { model?: string; tenant?: string },
): WorkloadRequest {
  let promptTokens = 0;
  for (const s of segments) promptTokens += s.tokens;
  return {
    arrivalMs,
    promptTokens,
    outputTokens,
    ...(extra?.model !== undefined ? { model: extra.model } : {}),
    ...(extra?.tenant !== undefined ? { tenant: extra.tenant } : {}),
    prompt: { kind: "segments", segments },
  };
}

/** Validates the options every generator shares. */
export function checkCommon(opts: { rate: number; seed: number }): void {
  if (!(opts.rate > 0)) throw new RangeError(`rate must be > 0 requests/s, got ${opts.rate}`);
  if (!Number.isFinite(opts.seed)) throw new RangeError(`seed must be a number, got ${opts.seed}`);
}

export function checkCount(name: string, n: number): void {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`${name} must be a positive integer, got ${n}`);
}
