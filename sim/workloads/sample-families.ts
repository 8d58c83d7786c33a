/**
 * Spatially hashed sampling of a workload by prefix family, after SHARDS
 * (Waldspurger, Park, Garthwaite, Ahmad: "Efficient MRC Construction with
 * SHARDS", FAST'15): keep a key iff hash(key) < R·2^32 and scale the cache
 * by R; the paper shows miss-ratio curves survive (its §3; errors around
 * 0.01 absolute at R = 0.01 on real block traces). The unit sampled here is
 * the prefix family, not the block: a request and every request that can
 * reuse its KV cache are kept or dropped together, so reuse inside the
 * sample is exactly the reuse of the full workload, on fewer families.
 *
 * Family = the segment keys common to every request, plus the next key. In
 * the Mooncake trace every prompt opens with block 0 (one system prompt) and
 * reuse beyond it happens between requests that share hash_ids[1]; sampling
 * on block 0 alone would keep all or nothing.
 */
import { hashString } from "../../src/routing/hash";
import type { Segment, Workload, WorkloadRequest } from "./types";

export interface FamilySample {
  /** Kept requests, in their original order, arrival times unchanged. */
  readonly requests: WorkloadRequest[];
  /** Distinct families in the input. */
  readonly families: number;
  readonly keptFamilies: number;
}

const TWO_POW_32 = 4294967296;
// Separator that cannot occur in a JSON-decoded trace key by accident.
const SEP = "\u0000";

function segmentsOf(r: WorkloadRequest, index: number, workload: string): readonly Segment[] {
  if (r.prompt.kind !== "segments")
    throw new Error(
      `sampleFamilies: request ${index} of ${workload} carries real token ids (an OpenAI request log); ` +
        "families are defined on segment keys, so only segment workloads (synthetic, Mooncake) can be sampled",
    );
  return r.prompt.segments;
}

/** Length of the longest run of segment keys that every request starts with. */
export function commonPrefixLength(prompts: readonly (readonly Segment[])[]): number {
  if (prompts.length === 0) return 0;
  const first = prompts[0]!;
  let n = first.length;
  for (let i = 1; i < prompts.length && n > 0; i++) {
    const p = prompts[i]!;
    let k = 0;
    const m = Math.min(n, p.length);
    while (k < m && p[k]!.key === first[k]!.key) k++;
    n = k;
  }
  return n;
}

/**
 * Family key of one request. Model and tenant scope it because the engine's
 * block keys are seeded by them: requests of two tenants never share cache,
 * so splitting them into separate families never separates a reuse pair.
 */
export function familyKey(r: WorkloadRequest, segments: readonly Segment[], common: number): string {
  const keys = segments.slice(0, Math.min(common + 1, segments.length)).map((s) => s.key);
  return [r.model ?? "", r.tenant ?? "", ...keys].join(SEP);
}

function checkRate(rate: number): void {
  if (!(rate > 0 && rate <= 1)) throw new RangeError(`sampleFamilies: rate must be in (0, 1], got ${rate}`);
}

/**
 * Keeps whole prefix families whose seeded 32-bit hash falls below rate·2^32.
 * Deterministic for (requests, rate, seed); rate 1 keeps everything.
 */
export function sampleFamilies(
  requests: readonly WorkloadRequest[],
  rate: number,
  seed: number,
  workloadName = "the workload",
): FamilySample {
  checkRate(rate);
  const prompts = requests.map((r, i) => segmentsOf(r, i, workloadName));
  const common = commonPrefixLength(prompts);
  const threshold = rate * TWO_POW_32;
  const verdicts = new Map<string, boolean>();
  const kept: WorkloadRequest[] = [];
  for (let i = 0; i < requests.length; i++) {
    const r = requests[i]!;
    const key = familyKey(r, prompts[i]!, common);
    let keep = verdicts.get(key);
    if (keep === undefined) {
      keep = hashString(key, seed) < threshold;
      verdicts.set(key, keep);
    }
    if (keep) kept.push(r);
  }
  let keptFamilies = 0;
  for (const v of verdicts.values()) if (v) keptFamilies++;
  return { requests: kept, families: verdicts.size, keptFamilies };
}

/** "1/4" for reciprocals of integers, else the decimal. */
export function formatRate(rate: number): string {
  const inv = 1 / rate;
  const n = Math.round(inv);
  if (n === 1 && Math.abs(inv - 1) < 1e-9) return "1";
  return n > 1 && Math.abs(inv - n) < 1e-9 ? `1/${n}` : String(rate);
}

/** A sampling rate from the command line: "0.25" or "1/4", in (0, 1]. */
export function parseSampleRate(s: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*\/\s*(\d+(?:\.\d+)?)\s*$/.exec(s);
  const rate = m !== null ? Number(m[1]) / Number(m[2]) : s.trim() === "" ? Number.NaN : Number(s);
  if (!(rate > 0 && rate <= 1))
    throw new RangeError(`sampling rate must be in (0, 1] (e.g. 0.25 or 1/4), got "${s}"`);
  return rate;
}

export interface SampledWorkload {
  readonly workload: Workload;
  /** For the report: "families sampled at 1/4 (1,843 of 7,373 kept, SHARDS)". */
  readonly description: string;
}

/** sampleFamilies applied to a whole workload (name, block size and malformed count kept). */
export function sampleWorkloadFamilies(w: Workload, rate: number, seed: number): SampledWorkload {
  const s = sampleFamilies(w.requests, rate, seed, `workload "${w.name}"`);
  const fmt = (n: number): string => n.toLocaleString("en-US");
  return {
    workload: { ...w, requests: s.requests },
    description: `families sampled at ${formatRate(rate)} (${fmt(s.keptFamilies)} of ${fmt(s.families)} kept, SHARDS)`,
  };
}
