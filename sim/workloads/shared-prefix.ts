/**
 * generated-shared-prefix, after SGLang's bench_serving dataset of that name:
 * G groups, each a system prompt shared by P prompts that add their own
 * question. Defaults are bench_serving's (gsp_num_groups 64,
 * gsp_prompts_per_group 16, gsp_system_prompt_len 2048, gsp_question_len 128,
 * gsp_output_len 256; sglang/bench_serving.py). Like bench_serving's default
 * (gsp_ordered false) the prompts are shuffled, then arrive as a Poisson
 * process at `rate` requests/s.
 */
import { poissonArrivals, Rng, shuffle } from "./prng";
import { checkCommon, checkCount, segmentRequest } from "./request";
import { DEFAULT_BLOCK_TOKENS } from "./segments";
import type { Segment, Workload } from "./types";

export interface SharedPrefixOptions {
  readonly rate: number;
  readonly seed: number;
  readonly groups?: number;
  readonly promptsPerGroup?: number;
  readonly systemPromptTokens?: number;
  readonly questionTokens?: number;
  readonly outputTokens?: number;
}

export function generatedSharedPrefix(opts: SharedPrefixOptions): Workload {
  checkCommon(opts);
  const groups = opts.groups ?? 64;
  const perGroup = opts.promptsPerGroup ?? 16;
  const sys = opts.systemPromptTokens ?? 2048;
  const question = opts.questionTokens ?? 128;
  const output = opts.outputTokens ?? 256;
  checkCount("groups", groups);
  checkCount("promptsPerGroup", perGroup);
  const rng = new Rng(opts.seed);
  const prompts: Segment[][] = [];
  for (let g = 0; g < groups; g++) {
    const system: Segment = { key: `gsp/${opts.seed}/sys/${g}`, tokens: sys };
    for (let p = 0; p < perGroup; p++)
      prompts.push([system, { key: `gsp/${opts.seed}/q/${g}/${p}`, tokens: question }]);
  }
  shuffle(prompts, rng.fork("order"));
  const arrivals = poissonArrivals(prompts.length, opts.rate, rng.fork("arrivals"));
  return {
    name: "generated-shared-prefix",
    blockTokens: DEFAULT_BLOCK_TOKENS,
    malformed: 0,
    requests: prompts.map((segments, i) => segmentRequest(arrivals[i]!, segments, output)),
  };
}
