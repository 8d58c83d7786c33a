/**
 * npx tsx sim/clairvoyant-main.ts --workload W --backends N --rate R|--speed X [--set S] [--seed S]
 *   [--preset NAME] [--kv-allocation incremental|reserve] [--objectives ttft,total] [--balance-factor C]
 *   [--policies a,b] [--requests N] [--knows K] [--lag-ms MS] [--max-tokens M] [--second-client SHARE[:K]] [--name NAME] [--out DIR]
 *
 * Runs the clairvoyant greedy reference (sim/clairvoyant.ts) on the same
 * workload, fleet and seed as `npm run bench:sim` (same flags, same report
 * name), and writes <out>/<name>.md and .json in bench:sim's format. Not a
 * policy: bench:sim never runs it. --policies adds routing policies run in
 * the same process, for a side-by-side (default: none, their figures are in
 * the bench:sim reports of the same name). --balance-factor C runs the first
 * objective once more within the bounded-load cap of factor C (clairvoyant_ttft_capped).
 * --knows K cuts the reference's knowledge down (sim/clairvoyant-knowledge.ts: exact, max-tokens, lagged,
 * max-tokens+lagged, learned, learned+lagged): output lengths from the clients' max_tokens or their mean
 * seen, engine state as of the last scrape every --lag-ms (default 1000) plus its own placements; default exact. Not exact: its runs are named clairvoyant_ttft_<knows>[_capped]
 * and the report <name>-knows-<knows>. --max-tokens M: how clients send max_tokens (client-max-tokens.ts;
 * default bench:sim's), a -mt-M suffix on the report's name when not the default. --second-client SHARE[:K]:
 * other traffic straight to the engines, as bench:sim's (-scSHARE[ofK] in the name, as its reports).
 */

import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  aloneTtftMs,
  CLAIRVOYANT_OBJECTIVES,
  CLAIRVOYANT_VIEW,
  type ClairvoyantObjective,
  clairvoyantFactory,
  clairvoyantName,
  everSeenHits,
} from "./clairvoyant";
import { DEFAULT_LAG_MS, KNOWS, type Knows, knowledge, knowsTag } from "./clairvoyant-knowledge";
import { DEFAULT_MAX_TOKENS_MODEL } from "./client-max-tokens";
import { describeSet, loadSetData, SET_SEEDS } from "./eval-sets";
import {
  engineFlags,
  FLEET_OPTIONS,
  maxTokensFlag,
  parseFlags,
  policiesFlag,
  positiveFlag,
  secondClientFlag,
  UsageError,
  WORKLOAD_OPTIONS,
  workloadFlags,
} from "./flags";
import { fmtMs, fmtPct } from "./format";
import { EngineModel } from "./model/engine-model";
import { DEFAULT_PRESET } from "./model/presets";
import type { PreparedWorkload } from "./prepare";
import { DEFAULT_PREFIX_TOKENS, prepareWorkload } from "./prepare";
import { renderJson, renderMarkdown } from "./report";
import { runPolicies } from "./run";
import { secondClientTag } from "./second-client";
import { engineConfig, type FleetConfig, simulatePolicy } from "./simulator";
import { percentile, sortedCopy } from "./stats";

function objectivesFlag(v: string | undefined): ClairvoyantObjective[] {
  const out: ClairvoyantObjective[] = [];
  for (const raw of (v ?? CLAIRVOYANT_OBJECTIVES.join(",")).split(",")) {
    const o = raw.trim();
    if (!(CLAIRVOYANT_OBJECTIVES as readonly string[]).includes(o))
      throw new UsageError(
        `--objectives: unknown objective "${o}": use ${CLAIRVOYANT_OBJECTIVES.join(", ")}`,
      );
    if (!out.includes(o as ClairvoyantObjective)) out.push(o as ClairvoyantObjective);
  }
  return out;
}

const NOTE =
  "clairvoyant_ttft / clairvoyant_total are the clairvoyant greedy reference (sim/clairvoyant.ts), not " +
  "routers: at each arrival they read every engine's exact state (queue, batch, KV contents, true output " +
  "lengths) and simulate the request on a copy of each engine; _ttft takes the smallest own TTFT, _total " +
  "the smallest own TTFT + delay added to the first tokens of the requests ahead; _capped chooses only " +
  "among engines under the bounded-load cap in requests (--balance-factor). Greedy: later arrivals " +
  "are unknown to them, so they are a reference, not an upper bound. The JSON's queueFreeFloor is each " +
  "request alone on an idle engine with the hit clairvoyant_ttft got: prefill compute, no queue; its " +
  "anyRouterFloor the same with the longest prefix any earlier request had (an unbounded cache): a lower " +
  "bound on every router's TTFT quantiles in this engine model.";

/**
 * Every request alone on an idle engine with the hit `hitsOf` got (aloneTtftMs): TTFT p50 and p99 of
 * prefill compute with no queue, the part of the tail no placement removes without longer hits.
 */
function queueFreeFloor(
  w: PreparedWorkload,
  fleet: FleetConfig,
  hitBlocks: (i: number) => number,
  hitsOf: string,
) {
  const cfg = engineConfig(fleet, w.blockTokens);
  const pristine = new EngineModel(cfg);
  const scratch = new EngineModel(cfg);
  const ttft = w.requests.map((r, i) =>
    aloneTtftMs(
      pristine,
      scratch,
      {
        id: String(i),
        blocks: w.promptBlocks[i]!,
        promptTokens: r.promptTokens,
        outputTokens: Math.max(1, r.outputTokens),
      },
      hitBlocks(i),
    ),
  );
  const sorted = sortedCopy(ttft);
  return { hitsOf, ttftP50Ms: percentile(sorted, 50), ttftP99Ms: percentile(sorted, 99) };
}

async function main(argv: string[]): Promise<void> {
  const values = parseFlags(argv, {
    ...FLEET_OPTIONS,
    ...WORKLOAD_OPTIONS,
    objectives: { type: "string" },
    "balance-factor": { type: "string" },
    knows: { type: "string" },
    "second-client": { type: "string" },
    "lag-ms": { type: "string" },
  });
  const { workload, isTrace, backends, rate, speed, set, seed, setData } = workloadFlags(values, 8);
  const engine = engineFlags(values.preset, values["kv-tokens"], values["kv-allocation"]);
  const objectives = objectivesFlag(values.objectives);
  const balanceFactor =
    values["balance-factor"] === undefined
      ? undefined
      : positiveFlag("balance-factor", values["balance-factor"]);
  if (balanceFactor !== undefined && !(balanceFactor > 1))
    throw new UsageError(`--balance-factor must be > 1, got ${balanceFactor}`);
  // How clients send max_tokens (what `--knows max-tokens` believes): bench:sim's default unless told.
  const maxTokens = maxTokensFlag(values["max-tokens"]);
  const knows = (values.knows ?? "exact") as Knows;
  if (!KNOWS.includes(knows))
    throw new UsageError(`--knows must be one of ${KNOWS.join(", ")}, got "${knows}"`);
  const lagMs = values["lag-ms"] === undefined ? DEFAULT_LAG_MS : positiveFlag("lag-ms", values["lag-ms"]);
  const policies = values.policies === undefined ? [] : policiesFlag(values.policies);
  // Other traffic on the engines, around the reference (bench:sim's --second-client): what lagged cannot see.
  const secondClient = secondClientFlag(values["second-client"]);
  const traffic = secondClientTag(secondClient);
  const base = workload.startsWith("file:") ? "trace" : workload;
  const inSet = set === undefined ? "" : isTrace ? `-${set}` : `-${set}-s${seed}`;
  const presetTag = engine.preset === DEFAULT_PRESET ? "" : `-${engine.preset}`;
  const name =
    values.name ??
    `${base}-${backends}b${isTrace ? `-x${speed}` : `-r${rate}`}${traffic}${inSet}${presetTag}${knows === "exact" ? "" : `-knows-${knows}`}${maxTokens === DEFAULT_MAX_TOKENS_MODEL ? "" : `-mt-${maxTokens}`}`;
  const outDir = values.out ?? "bench/results/clairvoyant";

  const data = await loadSetData(workload, setData);
  const setLine = describeSet(data.run);
  const prepared = prepareWorkload(data.workload, { prefixTokens: DEFAULT_PREFIX_TOKENS, maxTokens, seed });
  console.error(`set: ${setLine}; ${data.workload.name}: ${data.workload.requests.length} requests`);
  const fleet = { backends, seed, ...engine, ...(secondClient !== undefined ? { secondClient } : {}) };
  // learned: the tuning set's data of this workload is the gateway's history (none off the scoring set).
  const history =
    knows.startsWith("learned") && set === "scoring"
      ? (await loadSetData(workload, { ...setData, set: "tuning", seed: SET_SEEDS.tuning[0]! })).workload
          .requests
      : [];
  const cfg = engineConfig(fleet, prepared.blockTokens);
  // Absent max_tokens runs to the end of the preset's context (EngineConfig.maxModelLen).
  const { maxModelLen } = cfg;
  const knew = knowledge(knows, prepared, cfg, lagMs, history);
  // A lagged reference resets its beliefs at the simulator's scrape ticks (the race's fleet has none).
  const refFleet = knew.lagMs === undefined ? fleet : { ...fleet, scrapeMs: knew.lagMs };
  const tag = knowsTag(knows);
  const log = (p: {
    policy: string;
    hitRate: number;
    ttftP50Ms: number;
    ttftP99Ms: number;
    wallMs: number;
  }) =>
    console.error(
      `  ${p.policy.padEnd(18)} hit ${fmtPct(p.hitRate)}  TTFT p50 ${fmtMs(p.ttftP50Ms)} p99 ${fmtMs(p.ttftP99Ms)}  (${(p.wallMs / 1000).toFixed(1)} s)`,
    );
  // The oracle and the request statistics come with runPolicies, whatever policies it runs.
  const report = runPolicies(prepared, fleet, policies, log);
  // Each request's cached tokens under the first objective, for the queue-free floor below.
  const cached = new Float64Array(prepared.requests.length);
  const refs = objectives.map((o, k) => {
    const record = (i: number, _b: number, c: number): void => {
      cached[i] = c;
    };
    const observer = k === 0 ? { done: record } : undefined;
    const r = simulatePolicy(
      prepared,
      refFleet,
      clairvoyantName(o, false, tag),
      clairvoyantFactory(prepared, o, undefined, undefined, knew),
      CLAIRVOYANT_VIEW,
      undefined,
      observer,
    );
    log(r);
    return r;
  });
  // With --balance-factor: the first objective again, within the bounded-load cap.
  if (balanceFactor !== undefined) {
    const o = objectives[0]!;
    const r = simulatePolicy(
      prepared,
      refFleet,
      clairvoyantName(o, true, tag),
      clairvoyantFactory(prepared, o, undefined, balanceFactor, knew),
      CLAIRVOYANT_VIEW,
    );
    log(r);
    refs.push(r);
  }
  const floor = queueFreeFloor(
    prepared,
    fleet,
    (i) => Math.round(cached[i]! / prepared.blockTokens),
    clairvoyantName(objectives[0]!, false, tag),
  );
  // Every request's longest prefix computed by any earlier one: no router's hit is longer.
  const seen = everSeenHits(prepared.promptBlocks);
  const anyRouterFloor = queueFreeFloor(prepared, fleet, (i) => seen[i]!, "any earlier request");
  for (const f of [floor, anyRouterFloor])
    console.error(
      `  queue-free floor (hits: ${f.hitsOf}): TTFT p50 ${fmtMs(f.ttftP50Ms)} p99 ${fmtMs(f.ttftP99Ms)}`,
    );
  const full = {
    ...report,
    policies: [...report.policies, ...refs],
    queueFreeFloor: floor,
    anyRouterFloor,
  };
  const command = `npx tsx sim/clairvoyant-main.ts ${argv.map((a) => (/[\s"']/.test(a) ? JSON.stringify(a) : a)).join(" ")}`;
  await mkdir(outDir, { recursive: true });
  const cut: Record<Knows, string> = {
    exact: "",
    "max-tokens":
      " This run (--knows max-tokens): the reference knows output lengths only as the clients' max_tokens " +
      `(model ${maxTokens}; absent: max_model_len ${maxModelLen} − prompt), clipped to the KV cache, in every copied engine.`,
    lagged: ` This run (--knows lagged): engine state as of the last scrape tick (every ${lagMs} ms) plus its own placements and completions since.`,
    learned:
      " This run (--knows learned): the reference believes each request's output is the mean output of the " +
      `requests completed so far, the tuning set's ${history.length} included as history, within its max_tokens ` +
      `(model ${maxTokens}; absent: max_model_len ${maxModelLen} − prompt).`,
    "learned+lagged":
      ` This run (--knows learned+lagged): engine state as of the last scrape tick (every ${lagMs} ms) plus its own ` +
      `placements and completions since; outputs believed as the mean output completed so far (the tuning set's ${history.length} included as history), within max_tokens.`,
    "max-tokens+lagged":
      ` This run (--knows max-tokens+lagged): engine state as of the last scrape tick (every ${lagMs} ms) plus its own ` +
      `placements and completions since, output lengths as the clients' max_tokens (model ${maxTokens}; absent: max_model_len ${maxModelLen} − prompt).`,
  };
  const ctx = { command, set: setLine, note: NOTE + cut[knows] };
  await writeFile(join(outDir, `${name}.md`), renderMarkdown(full, ctx));
  await writeFile(join(outDir, `${name}.json`), renderJson(full, ctx));
  console.error(`wrote ${join(outDir, `${name}.md`)} and .json`);
}

main(process.argv.slice(2)).catch((e: unknown) => {
  console.error(`clairvoyant: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
});
