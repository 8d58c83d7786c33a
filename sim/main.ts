/**
 * npm run bench:sim -- --workload <generated-shared-prefix|multi-turn|zipf|no-shared-prefix|burst|burst-mooncake|
 *   mooncake|file:PATH>
 *   --backends N --rate R [--policies a,b|all] [--seed S] [--set tuning|scoring] [--speed X] [--requests N]
 *   [--preset NAME] [--kv-tokens T] [--kv-allocation incremental|reserve] [--prefix-tokens P] [--max-tokens M] [--sample-families R] [--duration-s D]
 *   [--scrape-ms MS] [--second-client SHARE[:K]] [--notice-delay-ms MEAN[:SIGMA[:CARRY]][,nofirst]] [--name NAME] [--out DIR]
 *
 * One operation = one policy replaying the whole workload on a simulated
 * fleet. The figures that matter: TTFT p50/p99 and hit rate per policy, and
 * the wall time of the whole run (Mooncake on 16 backends must stay < 60 s).
 * Writes <out>/<name>.md and .json (default out: bench/results).
 */

import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describeSet, loadSetData } from "./eval-sets";
import {
  ENGINE_USAGE,
  engineFlags,
  FLEET_OPTIONS,
  failure,
  maxTokensFlag,
  maxTokensHelp,
  noticeDelayFlag,
  parseFlags,
  policiesFlag,
  positiveFlag,
  sampleRateFlag,
  scrapeFlag,
  secondClientFlag,
  setNameTag,
  TRAFFIC_OPTIONS,
  TRAFFIC_USAGE,
  UsageError,
  WORKLOAD_OPTIONS,
  workloadFlags,
} from "./flags";
import { fmtMs, fmtPct } from "./format";
import { DEFAULT_PRESET } from "./model/presets";
import { ALL_POLICIES } from "./policies";
import { DEFAULT_PREFIX_TOKENS, prepareWorkload } from "./prepare";
import { renderJson, renderMarkdown } from "./report";
import { runPolicies } from "./run";
import { secondClientTag } from "./second-client";
import { sampleWorkloadFamilies } from "./workloads/sample-families";
import type { Workload } from "./workloads/types";

const HELP = `usage: npm run bench:sim -- --workload W --backends N --rate R [options]
  --workload     generated-shared-prefix | multi-turn | zipf | no-shared-prefix | burst | burst-mooncake |
                 mooncake | file:PATH
  --backends     number of simulated engines (default 8)
  --rate         requests/s for synthetic workloads (required for them)
  --speed        replay speed factor for traces (default 1)
  --policies     comma list or "all" (default all): ${ALL_POLICIES.join(", ")}
  --seed         seed of workload and router randomness (default 1, or the set's first seed)
  --set          tuning | scoring: replay that set's data (sim/README.md, "Tuning and scoring sets"):
                 tuning = seeds 1-2 of gsp, multi-turn, zipf, no-shared-prefix and a trace's first half;
                 scoring = seeds 3-5 of every synthetic workload and a trace's second half.
                 Without it the report still says which set (or neither) its data belongs to
  --requests     request count (synthetic) or cap (traces)
  --preset       ${ENGINE_USAGE.preset}
  --kv-tokens    ${ENGINE_USAGE.kvTokens}
  --kv-allocation ${ENGINE_USAGE.kvAllocation}
  --prefix-tokens  tokens our router hashes (default ${DEFAULT_PREFIX_TOKENS}); peers see the whole prompt
  ${maxTokensHelp(17)}
  --sample-families R  keep only the prefix families whose seeded hash falls below R
                 (0.25 or 1/4; SHARDS, Waldspurger et al. FAST'15), applied to the loaded
                 workload before anything else. The KV capacity is NOT scaled for you:
                 SHARDS keeps cache behaviour only if you also pass --kv-tokens = R x the
                 full-trace capacity (e.g. 1/4 -> --kv-tokens 110592 for the default 442368),
                 and --speed 1/R keeps the unsampled request rate
  --duration-s D traces: keep the first D seconds of recorded time (before --speed), after sampling
  --scrape-ms MS ${TRAFFIC_USAGE.scrapeMs}
  --second-client SHARE[:K]  ${TRAFFIC_USAGE.secondClient}
  --notice-delay-ms D  ${TRAFFIC_USAGE.noticeDelay}
  --name         report name (default <workload>-<N>b[-r<rate>|-x<speed>][-<set>[-s<seed>]])
  --out          output directory (default bench/results)`;

/** Requests that arrived in the first `seconds` of recorded time (arrivals are already divided by speed). */
function firstSeconds(w: Workload, seconds: number, speed: number): Workload {
  const endMs = (seconds * 1000) / speed;
  return { ...w, requests: w.requests.filter((r) => r.arrivalMs < endMs) };
}

async function main(argv: string[]): Promise<void> {
  const values = parseFlags(argv, {
    ...FLEET_OPTIONS,
    ...TRAFFIC_OPTIONS,
    ...WORKLOAD_OPTIONS,
    "prefix-tokens": { type: "string" },
    "duration-s": { type: "string" },
  });
  if (values.help) {
    console.log(HELP);
    return;
  }
  const { workload, isTrace, backends, rate, speed, set, seed, setData } = workloadFlags(values, 8);
  const engine = engineFlags(values.preset, values["kv-tokens"], values["kv-allocation"]);
  const prefixTokens = positiveFlag("prefix-tokens", values["prefix-tokens"], DEFAULT_PREFIX_TOKENS);
  const policies = policiesFlag(values.policies);
  const maxTokens = maxTokensFlag(values["max-tokens"]);
  const sampleRate = sampleRateFlag(values["sample-families"]);
  const scrapeMs = scrapeFlag(values["scrape-ms"]);
  const secondClient = secondClientFlag(values["second-client"]);
  const noticeDelay = noticeDelayFlag(values["notice-delay-ms"]);
  const durationS =
    values["duration-s"] === undefined ? undefined : positiveFlag("duration-s", values["duration-s"]);
  if (durationS !== undefined && !isTrace) throw new UsageError("--duration-s applies to traces only");
  const base = workload.startsWith("file:") ? "trace" : workload;
  const traffic = `${secondClientTag(secondClient)}${scrapeMs > 0 ? `-scrape${scrapeMs}` : ""}`;
  const variant = `${sampleRate !== undefined ? `-sf${+sampleRate.toFixed(6)}` : ""}${durationS !== undefined ? `-${durationS}s` : ""}${traffic}`;
  const inSet = setNameTag(set, isTrace, seed, values.seed !== undefined);
  const presetTag = engine.preset === DEFAULT_PRESET ? "" : `-${engine.preset}`;
  const name =
    values.name ??
    `${base}-${backends}b${isTrace ? `-x${speed}` : `-r${rate}`}${variant}${inSet}${presetTag}`;
  const outDir = values.out ?? resolve(dirname(fileURLToPath(import.meta.url)), "../bench/results");

  const data = await loadSetData(workload, setData);
  let w: Workload = data.workload;
  let run = data.run;
  const notes: string[] = [];
  if (sampleRate !== undefined) {
    const s = sampleWorkloadFamilies(w, sampleRate, seed);
    w = s.workload;
    notes.push(s.description);
  }
  if (durationS !== undefined) {
    // A prefix of the trace in arrival order: the run covers its first requests up to D seconds.
    if (run.kind === "trace")
      run = { ...run, to: run.from + firstSeconds(data.workload, durationS, speed).requests.length };
    w = firstSeconds(w, durationS, speed);
    notes.push(`first ${durationS} s of recorded time`);
  }
  const note = notes.length > 0 ? `Replayed subset: ${notes.join("; ")}.` : undefined;
  if (note !== undefined) {
    // The name carries the sampling too, so the report title and the JSON say what was replayed.
    w = { ...w, name: `${w.name} [${notes.join("; ")}]` };
    console.error(note);
  }
  const setLine = describeSet(run);
  console.error(`set: ${setLine}`);
  const prepared = prepareWorkload(w, { prefixTokens, maxTokens, seed });
  console.error(
    `${w.name}: ${w.requests.length} requests, keys in ${(prepared.prepareMs / 1000).toFixed(1)} s`,
  );
  const fleet = {
    backends,
    seed,
    ...engine,
    ...(scrapeMs > 0 ? { scrapeMs } : {}),
    ...(secondClient !== undefined ? { secondClient } : {}),
    ...(noticeDelay !== undefined ? { noticeDelay } : {}),
  };
  const report = runPolicies(prepared, fleet, policies, (p) =>
    console.error(
      `  ${p.policy.padEnd(18)} hit ${fmtPct(p.hitRate)}  TTFT p50 ${fmtMs(p.ttftP50Ms)} p99 ${fmtMs(p.ttftP99Ms)}  maxLoad ${p.maxLoadRatio.toFixed(2)}  (${(p.wallMs / 1000).toFixed(1)} s)`,
    ),
  );
  console.error(
    `oracle hit ${fmtPct(report.oracle.hitRate)}; all policies in ${(report.simulateMs / 1000).toFixed(1)} s (+ ${(prepared.prepareMs / 1000).toFixed(1)} s hashing)`,
  );
  const command = `npm run bench:sim -- ${argv.map((a) => (/[\s"']/.test(a) ? JSON.stringify(a) : a)).join(" ")}`;
  await mkdir(outDir, { recursive: true });
  await writeFile(
    join(outDir, `${name}.md`),
    renderMarkdown(report, { command, set: setLine, ...(note !== undefined ? { note } : {}) }),
  );
  await writeFile(
    join(outDir, `${name}.json`),
    renderJson(report, { command, set: setLine, ...(note !== undefined ? { note } : {}) }),
  );
  console.error(`wrote ${join(outDir, `${name}.md`)} and .json`);
}

main(process.argv.slice(2)).catch((e: unknown) => {
  process.exitCode = failure(e, "bench:sim", HELP, (s) => console.error(s));
});
