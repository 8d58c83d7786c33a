/**
 * npm run bench:cells -- --workload W --backends N --cells 1,2,4,8 (--rate R | --speed X) [--set S] [--seed S]
 *   [--policy P] [--requests N] [--preset NAME] [--kv-tokens T] [--kv-allocation A] [--max-tokens M] [--name NAME]
 *   [--out DIR]
 *
 * One pool split into K RouterDO cells, for each K in --cells (sim/cells.ts):
 * one operation = one replay of the workload on the whole fleet, the
 * requests spread over the cells by the Worker's own cell choice. The figures
 * that matter: hit rate against K = 1 (the cost of splitting the affinity
 * index), and the busiest cell's time-averaged load over the weighted mean
 * (what the cell-level bound holds). Writes <out>/<name>.md and .json
 * (default out: bench/results, name cells-<workload>-<N>b[-<set>]).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { POLICY_NAMES, type PolicyName } from "../src/routing/types";
import { type CellTally, cellLoads, cellsRouterFactory, emptyTally } from "./cells";
import { describeSet, loadSetData } from "./eval-sets";
import {
  countFlag,
  engineFlags,
  FLEET_OPTIONS,
  failure,
  maxTokensFlag,
  parseFlags,
  UsageError,
  WORKLOAD_OPTIONS,
  workloadFlags,
} from "./flags";
import { fmtMs, fmtNum, fmtPct, reproduceLines, table } from "./format";
import { isSimPolicy, viewOf } from "./policies";
import { prepareWorkload } from "./prepare";
import { machine } from "./report";
import { fleetSpecs, type PolicyResult, simulatePolicy } from "./simulator";

const HELP = `usage: npm run bench:cells -- --workload W --backends N --cells 1,2,4,8 (--rate R | --speed X) [options]
  --workload   generated-shared-prefix | multi-turn | zipf | no-shared-prefix | burst | burst-mooncake |
               mooncake | file:PATH
  --backends   engines in the pool (default 64)
  --cells      comma list of cell counts K (default 1,2,4,8)
  --rate       requests/s for synthetic workloads; --speed: replay speed for traces (default 1)
  --set        tuning | scoring (sim/README.md, "Tuning and scoring sets"); --seed: one of its seeds
  --isolates   Worker isolates the requests pass through, each drawn at random per request, each with its
               own cell chooser and view of cell loads (default 1)
  --policy     the routing core's policy each cell runs (default prefix_aware)
  --requests   request count (synthetic) or cap (traces)
  --preset, --kv-tokens, --kv-allocation, --max-tokens   as bench:sim (--kv-allocation: default
               incremental, vLLM V1's step-by-step allocation with preemption; reserve: the default before)
  --name       report name (default cells-<workload>-<N>b[-<set>]); --out: directory (default bench/results)`;

interface CellRun {
  readonly cells: number;
  readonly result: PolicyResult;
  readonly tally: CellTally;
  readonly cellLoad: { readonly perCell: number[]; readonly maxOverMean: number };
}

async function main(argv: string[]): Promise<void> {
  const values = parseFlags(argv, {
    ...FLEET_OPTIONS,
    ...WORKLOAD_OPTIONS,
    cells: { type: "string" },
    isolates: { type: "string" },
    policy: { type: "string" },
  });
  if (values.help) {
    console.log(HELP);
    return;
  }
  const { workload, isTrace, backends, rate, speed, set, seed, setData } = workloadFlags(values, 64);
  const ks = (values.cells ?? "1,2,4,8").split(",").map((x) => countFlag("cells", x));
  for (const k of ks)
    if (k > backends) throw new UsageError(`--cells ${k}: more cells than --backends ${backends}`);
  const isolates = countFlag("isolates", values.isolates, 1);
  const policy = values.policy ?? "prefix_aware";
  if (!isSimPolicy(policy) || !(POLICY_NAMES as readonly string[]).includes(policy))
    throw new UsageError(`--policy must be one of ${POLICY_NAMES.join(", ")} (cells run the routing core)`);
  const maxTokens = maxTokensFlag(values["max-tokens"]);
  const fleet = {
    backends,
    seed,
    ...engineFlags(values.preset, values["kv-tokens"], values["kv-allocation"]),
  };
  const base = workload.startsWith("file:") ? "trace" : workload;
  const name = values.name ?? `cells-${base}-${backends}b${set === undefined ? "" : `-${set}`}`;
  const outDir = values.out ?? resolve(dirname(fileURLToPath(import.meta.url)), "../bench/results");

  const { workload: w, run } = await loadSetData(workload, setData);
  const setLine = describeSet(run);
  const prepared = prepareWorkload(w, { maxTokens, seed });
  console.error(`${w.name}: ${w.requests.length} requests; set: ${setLine}`);
  const specs = fleetSpecs(fleet);
  const runs: CellRun[] = [];
  for (const k of ks) {
    const tally = emptyTally();
    const factory = cellsRouterFactory(
      { policy: policy as PolicyName, blockTokens: prepared.blockTokens, cells: k, isolates, seed },
      tally,
    );
    const result = simulatePolicy(prepared, fleet, `${policy} K=${k}`, factory, viewOf(policy as PolicyName));
    const cellLoad = cellLoads(result.inflightAvg, specs, tally.cellOf, k);
    runs.push({ cells: k, result, tally, cellLoad });
    console.error(
      `  K=${k}: hit ${fmtPct(result.hitRate)}  TTFT p50 ${fmtMs(result.ttftP50Ms)} p99 ${fmtMs(result.ttftP99Ms)}  cell max/mean ${cellLoad.maxOverMean.toFixed(2)}  off home ${fmtPct(tally.spill / result.requests)}  split ${fmtPct(tally.split / result.requests)}  (${(result.wallMs / 1000).toFixed(1)} s)`,
    );
  }
  const command = `npm run bench:cells -- ${argv.map((a) => (/[\s"']/.test(a) ? JSON.stringify(a) : a)).join(" ")}`;
  const load = isTrace ? `speed ×${speed}` : `${rate} requests/s`;
  const k1 = runs.find((r) => r.cells === 1)?.result.hitRate;
  const rows = runs.map((r) => [
    String(r.cells),
    fmtNum(backends / r.cells, 1),
    fmtPct(r.result.hitRate),
    k1 === undefined ? "–" : `${((r.result.hitRate - k1) * 100).toFixed(1)}`,
    fmtMs(r.result.ttftP50Ms),
    fmtMs(r.result.ttftP99Ms),
    fmtNum(r.cellLoad.maxOverMean, 2),
    fmtNum(r.result.maxLoadRatio, 2),
    fmtPct(r.tally.spill / r.result.requests),
    fmtPct(r.tally.split / r.result.requests),
  ]);
  const md = [
    `# Cells: ${w.name}, ${backends} backends, ${policy} in each cell`,
    "",
    ...reproduceLines(command),
    `Machine: ${machine()}. ${w.requests.length} requests at ${load}; set: ${setLine}.`,
    `Worker isolates: ${isolates} (${isolates === 1 ? "every request through one cell chooser" : "each request through one drawn at random, each isolate learning from its own requests and from what its route responses relay"}).`,
    `Fleet: ${backends} × ${fleet.preset} (${fleet.kvCacheTokens} KV tokens each), seed ${seed}. Each cell is a`,
    "routing-core Router over the backends src/routing/cells.ts assigns it; each request's cell is chosen by",
    "src/routing/cell-chooser.ts from the cells' in-flight figures as route responses relay them (cell-loads.ts)",
    "and the conversations any isolate placed, as the cells relay them (cell-families.ts).",
    "",
    table(
      [
        "K",
        "backends/cell",
        "hit rate",
        "Δ vs K=1 (points)",
        "TTFT p50",
        "TTFT p99",
        "busiest cell / mean (time-avg)",
        "busiest backend / mean",
        "off their family's home cell",
        "in a split family",
      ],
      rows,
    ),
    "",
  ].join("\n");
  const json = {
    command,
    workload: w.name,
    requests: w.requests.length,
    set: setLine,
    backends,
    isolates,
    policy,
    load,
    runs: runs.map((r) => ({
      cells: r.cells,
      hitRate: r.result.hitRate,
      ttftP50Ms: r.result.ttftP50Ms,
      ttftP99Ms: r.result.ttftP99Ms,
      cellMaxOverMean: r.cellLoad.maxOverMean,
      cellLoads: r.cellLoad.perCell,
      backendMaxLoadRatio: r.result.maxLoadRatio,
      home: r.tally.home,
      spill: r.tally.spill,
      split: r.tally.split,
      wallMs: r.result.wallMs,
    })),
  };
  await mkdir(outDir, { recursive: true });
  await writeFile(join(outDir, `${name}.md`), md);
  await writeFile(join(outDir, `${name}.json`), `${JSON.stringify(json, null, 2)}\n`);
  console.error(`wrote ${join(outDir, `${name}.md`)} and .json`);
}

main(process.argv.slice(2)).catch((e: unknown) => {
  process.exitCode = failure(e, "bench:cells", HELP, (s) => console.error(s));
});
