/**
 * burst: bursts of a fresh prefix, the case users ask routers to get right
 * when a new document or system prompt appears (llm-d-router #1726: a burst
 * of a new prefix scatters across replicas and is prefilled once per
 * replica). `groups` groups (64); each is `perGroup` requests (16) that share
 * a prefix no other group uses (4096 tokens) and add their own question (128
 * tokens), all arriving within `burstMs` (100 ms, uniform) of the group's
 * start; group starts are a Poisson process at rate ÷ perGroup groups/s, so
 * `rate` is the mean request rate. Output 256 tokens.
 *
 * A router that keeps a burst on one backend prefills its prefix once (vLLM
 * caches each block when it schedules it, so the later requests of the burst
 * hit it); one that scatters the burst pays the prefix once per backend it
 * touches.
 *
 * Two encodings of the same traffic: `burst` in 16-token blocks like the
 * other generators, and `burst-mooncake`, Mooncake trace records (512-token
 * hash-id blocks; burstMooncakeRecords() gives the lines of such a trace)
 * read by the Mooncake reader, as a burst trace replayed with --trace would be.
 */
import { MOONCAKE_BLOCK_TOKENS, type MooncakeRecord, mooncakeRequest } from "./mooncake";
import { poissonArrivals, Rng } from "./prng";
import { checkCommon, checkCount, segmentRequest } from "./request";
import { DEFAULT_BLOCK_TOKENS } from "./segments";
import type { Workload } from "./types";

export interface BurstOptions {
  /** Mean request rate, requests/s (groups start at rate ÷ perGroup per second). */
  readonly rate: number;
  readonly seed: number;
  readonly groups?: number;
  readonly perGroup?: number;
  readonly prefixTokens?: number;
  readonly questionTokens?: number;
  readonly outputTokens?: number;
  /** Width of a burst: its requests arrive uniformly within this many ms of its start. */
  readonly burstMs?: number;
}

interface Arrival {
  readonly arrivalMs: number;
  readonly group: number;
  /** Request number in the whole workload (its question's identity). */
  readonly index: number;
}

interface BurstShape {
  readonly prefixTokens: number;
  readonly questionTokens: number;
  readonly outputTokens: number;
  readonly arrivals: readonly Arrival[];
}

function plan(opts: BurstOptions): BurstShape {
  checkCommon(opts);
  const groups = opts.groups ?? 64;
  const perGroup = opts.perGroup ?? 16;
  const burstMs = opts.burstMs ?? 100;
  checkCount("groups", groups);
  checkCount("perGroup", perGroup);
  if (!(burstMs >= 0 && Number.isFinite(burstMs)))
    throw new RangeError(`burstMs must be ≥ 0, got ${burstMs}`);
  const rng = new Rng(opts.seed);
  const starts = poissonArrivals(groups, opts.rate / perGroup, rng.fork("groups"));
  const within = rng.fork("within");
  const arrivals: Arrival[] = [];
  for (let g = 0; g < groups; g++)
    for (let p = 0; p < perGroup; p++)
      arrivals.push({ arrivalMs: starts[g]! + within.next() * burstMs, group: g, index: g * perGroup + p });
  arrivals.sort((a, b) => a.arrivalMs - b.arrivalMs || a.index - b.index);
  return {
    prefixTokens: opts.prefixTokens ?? 4096,
    questionTokens: opts.questionTokens ?? 128,
    outputTokens: opts.outputTokens ?? 256,
    arrivals,
  };
}

/** The burst workload in 16-token blocks. */
export function burst(opts: BurstOptions): Workload {
  const s = plan(opts);
  return {
    name: "burst",
    blockTokens: DEFAULT_BLOCK_TOKENS,
    malformed: 0,
    requests: s.arrivals.map((a) =>
      segmentRequest(
        a.arrivalMs,
        [
          { key: `burst/${opts.seed}/p/${a.group}`, tokens: s.prefixTokens },
          { key: `burst/${opts.seed}/q/${a.index}`, tokens: s.questionTokens },
        ],
        s.outputTokens,
      ),
    ),
  };
}

/**
 * The same traffic as Mooncake trace records: each group's prefix is its own
 * run of hash ids (prefixTokens must be a multiple of 512), each question
 * ids of its own, the last block partial.
 */
export function burstMooncakeRecords(opts: BurstOptions): MooncakeRecord[] {
  const s = plan(opts);
  if (s.prefixTokens % MOONCAKE_BLOCK_TOKENS !== 0)
    throw new RangeError(
      `prefixTokens must be a multiple of ${MOONCAKE_BLOCK_TOKENS}, got ${s.prefixTokens}`,
    );
  const prefixBlocks = s.prefixTokens / MOONCAKE_BLOCK_TOKENS;
  const questionBlocks = Math.ceil(s.questionTokens / MOONCAKE_BLOCK_TOKENS);
  const firstQuestionId = (opts.groups ?? 64) * prefixBlocks;
  return s.arrivals.map((a) => ({
    timestamp: a.arrivalMs,
    input_length: s.prefixTokens + s.questionTokens,
    output_length: s.outputTokens,
    hash_ids: [
      ...Array.from({ length: prefixBlocks }, (_, j) => a.group * prefixBlocks + j),
      ...Array.from({ length: questionBlocks }, (_, j) => firstQuestionId + a.index * questionBlocks + j),
    ],
  }));
}

/** The burst workload as a Mooncake trace in 512-token blocks. */
export function burstMooncake(opts: BurstOptions): Workload {
  const requests = burstMooncakeRecords(opts).map((rec) => {
    const r = mooncakeRequest({ ...rec });
    if (typeof r === "string") throw new Error(`burst-mooncake: ${r}`);
    return r;
  });
  return { name: "burst-mooncake", blockTokens: MOONCAKE_BLOCK_TOKENS, malformed: 0, requests };
}

/** Groups for a requested request count (whole groups, at least one). */
export function burstGroupsFor(requests: number, perGroup = 16): number {
  return Math.max(1, Math.round(requests / perGroup));
}
