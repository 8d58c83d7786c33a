/**
 * zipf-hot-prefix: one prefix carries half the traffic (a popular agent's
 * tool instructions), the other half picks one of `prefixes` prefixes by
 * Zipf (s = 1.0 by default, the classic web-popularity exponent). Each prompt
 * is prefix (2048 tokens) + a unique suffix (256 tokens); output 128 tokens.
 * The hot prefix alone can saturate one backend: a router must spill it.
 */
import { poissonArrivals, Rng, ZipfSampler } from "./prng";
import { checkCommon, checkCount, segmentRequest } from "./request";
import { DEFAULT_BLOCK_TOKENS } from "./segments";
import type { Workload } from "./types";

export interface ZipfHotPrefixOptions {
  readonly rate: number;
  readonly seed: number;
  readonly requests?: number;
  /** Share of requests on the hot prefix, 0..1. */
  readonly hotShare?: number;
  /** Number of other prefixes (Zipf-distributed). */
  readonly prefixes?: number;
  readonly zipfS?: number;
  readonly prefixTokens?: number;
  readonly suffixTokens?: number;
  readonly outputTokens?: number;
}

export function zipfHotPrefix(opts: ZipfHotPrefixOptions): Workload {
  checkCommon(opts);
  const n = opts.requests ?? 2000;
  checkCount("requests", n);
  const hotShare = opts.hotShare ?? 0.5;
  if (!(hotShare >= 0 && hotShare <= 1)) throw new RangeError(`hotShare must be in [0, 1], got ${hotShare}`);
  const zipf = new ZipfSampler(opts.prefixes ?? 256, opts.zipfS ?? 1.0);
  const prefixTokens = opts.prefixTokens ?? 2048;
  const suffixTokens = opts.suffixTokens ?? 256;
  const output = opts.outputTokens ?? 128;
  const rng = new Rng(opts.seed);
  const pick = rng.fork("prefix");
  const arrivals = poissonArrivals(n, opts.rate, rng.fork("arrivals"));
  return {
    name: "zipf",
    blockTokens: DEFAULT_BLOCK_TOKENS,
    malformed: 0,
    requests: arrivals.map((t, i) => {
      const prefix = pick.next() < hotShare ? "hot" : `z${zipf.sample(pick)}`;
      return segmentRequest(
        t,
        [
          { key: `zipf/${opts.seed}/p/${prefix}`, tokens: prefixTokens },
          { key: `zipf/${opts.seed}/s/${i}`, tokens: suffixTokens },
        ],
        output,
      );
    }),
  };
}
