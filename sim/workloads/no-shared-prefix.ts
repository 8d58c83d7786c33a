/**
 * no-shared-prefix: every prompt is unique from its first token, so no cache
 * can help and a prefix-aware router must behave like a load balancer. The
 * guard against regressions. Prompt 1024..3072 tokens (uniform; the same mean
 * as generated-shared-prefix's 2176), output 256.
 */
import { poissonArrivals, Rng } from "./prng";
import { checkCommon, checkCount, segmentRequest } from "./request";
import { DEFAULT_BLOCK_TOKENS } from "./segments";
import type { Workload } from "./types";

export interface NoSharedPrefixOptions {
  readonly rate: number;
  readonly seed: number;
  readonly requests?: number;
  readonly minPromptTokens?: number;
  readonly maxPromptTokens?: number;
  readonly outputTokens?: number;
}

export function noSharedPrefix(opts: NoSharedPrefixOptions): Workload {
  checkCommon(opts);
  const n = opts.requests ?? 2000;
  checkCount("requests", n);
  const lo = opts.minPromptTokens ?? 1024;
  const hi = opts.maxPromptTokens ?? 3072;
  const output = opts.outputTokens ?? 256;
  const rng = new Rng(opts.seed);
  const sizes = rng.fork("sizes");
  const arrivals = poissonArrivals(n, opts.rate, rng.fork("arrivals"));
  return {
    name: "no-shared-prefix",
    blockTokens: DEFAULT_BLOCK_TOKENS,
    malformed: 0,
    requests: arrivals.map((t, i) =>
      segmentRequest(t, [{ key: `nsp/${opts.seed}/${i}`, tokens: sizes.int(lo, hi) }], output),
    ),
  };
}
