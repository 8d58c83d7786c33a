/**
 * Load sweep: one policy (default least_outstanding) over a list of request
 * rates (synthetic workloads) or speed factors (traces), to find the load at
 * which a comparison is meaningful. Idle TTFT = that policy's TTFT at the
 * first (lowest) load, which the caller picks low enough for queues to be
 * empty; a load qualifies when p99 TTFT ≥ 2 × idle p99.
 *
 *   npm run bench:sweep -- --workload W --backends N --loads 0.5,4,8,16 [--policy P] [--seed S]
 *     [--set tuning|scoring] [--preset NAME] [--kv-tokens T] [--kv-allocation incremental|reserve] [--requests N]
 *     [--max-tokens M] [--out FILE]
 *
 * Choosing a load is tuning: sweep on the tuning set (--set tuning), score on the other.
 */
import { writeFile } from "node:fs/promises";
import { MAX_TOKENS_MODELS } from "./client-max-tokens";
import { describeSet, loadSetData } from "./eval-sets";
import {
  countFlag,
  engineFlags,
  FLEET_OPTIONS,
  failure,
  HelpRequested,
  maxTokensFlag,
  parseFlags,
  policiesFlag,
  positiveFlag,
  runSeed,
  setFlag,
  UsageError,
} from "./flags";
import { fmtMs, fmtNum, fmtPct, table } from "./format";
import { routerFactory, viewOf } from "./policies";
import { prepareWorkload } from "./prepare";
import { machine } from "./report";
import { simulatePolicy } from "./simulator";
import { isTraceSpec } from "./workloads/index";

const USAGE = `npm run bench:sweep -- --workload W --loads 0.5,4,8,16 [--backends N (default 8)]
  [--policy P (default least_outstanding)] [--seed S] [--set tuning|scoring] [--preset NAME] [--kv-tokens T]
  [--kv-allocation incremental|reserve] [--requests N] [--max-tokens M] [--out FILE]
Loads are request rates for a synthetic workload, speed factors for a trace. Sweep on --set tuning.`;

/** A load is busy when the policy's p99 TTFT is at least this many times its idle p99. */
const BUSY_RATIO = 2;

async function main(argv: string[]): Promise<void> {
  const values = parseFlags(argv, {
    workload: { type: "string" },
    backends: FLEET_OPTIONS.backends,
    loads: { type: "string" },
    policy: { type: "string" },
    seed: FLEET_OPTIONS.seed,
    set: { type: "string" },
    preset: FLEET_OPTIONS.preset,
    "kv-tokens": FLEET_OPTIONS["kv-tokens"],
    "kv-allocation": FLEET_OPTIONS["kv-allocation"],
    "max-tokens": FLEET_OPTIONS["max-tokens"],
    requests: { type: "string" },
    out: { type: "string" },
    help: FLEET_OPTIONS.help,
  });
  if (values.help) throw new HelpRequested();
  const workload = values.workload;
  if (workload === undefined || values.loads === undefined)
    throw new UsageError("--workload and --loads are required");
  const isTrace = isTraceSpec(workload);
  const loads = values.loads.split(",").map((x) => positiveFlag("loads", x));
  const [policy] = policiesFlag(values.policy ?? "least_outstanding");
  const backends = countFlag("backends", values.backends, 8);
  const set = setFlag(values.set);
  const seed = runSeed(set, workload, values.seed);
  const requests = values.requests === undefined ? undefined : countFlag("requests", values.requests);
  const maxTokens = maxTokensFlag(values["max-tokens"]);
  const fleet = {
    backends,
    seed,
    ...engineFlags(values.preset, values["kv-tokens"], values["kv-allocation"]),
  };
  const rows: string[][] = [];
  let idleP99 = Number.NaN;
  let busy: number | undefined;
  let setLine = "";
  for (const load of loads) {
    const { workload: w, run } = await loadSetData(workload, {
      ...(isTrace ? { rate: 1, speed: load } : { rate: load }),
      seed,
      ...(requests === undefined ? {} : { requests }),
      ...(set === undefined ? {} : { set }),
    });
    setLine = describeSet(run);
    const p = prepareWorkload(w, { maxTokens, seed });
    const r = simulatePolicy(p, fleet, policy!, routerFactory(policy!, p.blockTokens), viewOf(policy!));
    if (Number.isNaN(idleP99)) idleP99 = r.ttftP99Ms;
    if (busy === undefined && r.ttftP99Ms >= BUSY_RATIO * idleP99) busy = load;
    const row = [
      isTrace ? `speed ${load}` : `${load} req/s`,
      fmtMs(r.ttftP50Ms),
      fmtMs(r.ttftP99Ms),
      fmtNum(r.ttftP99Ms / idleP99, 3),
      fmtPct(r.hitRate),
      fmtNum(
        r.inflightAvg.reduce((a, b) => a + b, 0),
        1,
      ),
    ];
    rows.push(row);
    console.error(row.join("  "));
  }
  const cmd = `npm run bench:sweep -- ${argv.join(" ")}`;
  const md = [
    `# Load sweep: ${workload}, ${backends} backends of ${fleet.preset} (KV allocation ${fleet.engine?.kvAllocation}), ${policy}`,
    "",
    "```",
    cmd,
    "```",
    "",
    `Machine: ${machine()}. Idle = the first load's p99 TTFT (${fmtMs(idleP99)}). Set: ${setLine}.`,
    `max_tokens as clients send it (model \`${maxTokens}\`): ${MAX_TOKENS_MODELS[maxTokens].summary}.`,
    "",
    table(["load", "TTFT p50", "TTFT p99", "p99 / idle p99", "hit rate", "fleet in-flight (avg)"], rows),
    "",
    busy === undefined
      ? `No load reached ${BUSY_RATIO} × idle p99.`
      : `First load with p99 ≥ ${BUSY_RATIO} × idle p99 (the busy load): ${isTrace ? `speed ${busy}` : `${busy} req/s`}.`,
    "",
  ].join("\n");
  if (values.out !== undefined) await writeFile(values.out, md);
  else console.log(md);
}

main(process.argv.slice(2)).catch((e: unknown) => {
  process.exitCode = failure(e, "bench:sweep", USAGE, (s) => console.error(s));
});
