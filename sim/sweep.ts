/**
 * Load sweep: one policy (default least_outstanding) over a list of request
 * rates (synthetic workloads) or speed factors (traces), to find the load at
 * which a comparison is meaningful. Idle TTFT = that policy's TTFT at the
 * first (lowest) load, which the caller picks low enough for queues to be
 * empty; a load qualifies when p99 TTFT ≥ 2 × idle p99.
 *
 *   npm run bench:sweep -- --workload W --backends N --loads 0.5,4,8,16 [--policy P] [--seed S]
 *     [--preset NAME] [--kv-tokens T] [--requests N] [--out FILE]
 */
import { writeFile } from "node:fs/promises";
import {
  countFlag,
  engineFlags,
  FLEET_OPTIONS,
  parseFlags,
  policiesFlag,
  positiveFlag,
  seedFlag,
  UsageError,
} from "./flags";
import { fmtMs, fmtNum, fmtPct, table } from "./format";
import { routerFactory } from "./policies";
import { prepareWorkload } from "./prepare";
import { machine } from "./report";
import { simulatePolicy } from "./simulator";
import { loadWorkload } from "./workloads/index";

async function main(argv: string[]): Promise<void> {
  const values = parseFlags(argv, {
    workload: { type: "string" },
    backends: FLEET_OPTIONS.backends,
    loads: { type: "string" },
    policy: { type: "string" },
    seed: FLEET_OPTIONS.seed,
    preset: FLEET_OPTIONS.preset,
    "kv-tokens": FLEET_OPTIONS["kv-tokens"],
    requests: { type: "string" },
    out: { type: "string" },
  });
  const workload = values.workload;
  if (workload === undefined || values.loads === undefined)
    throw new UsageError("--workload and --loads are required");
  const isTrace = workload === "mooncake" || workload.startsWith("file:");
  const loads = values.loads.split(",").map((x) => positiveFlag("loads", x));
  const [policy] = policiesFlag(values.policy ?? "least_outstanding");
  const backends = countFlag("backends", values.backends, 8);
  const seed = seedFlag(values.seed);
  const requests = values.requests === undefined ? undefined : countFlag("requests", values.requests);
  const fleet = { backends, seed, ...engineFlags(values.preset, values["kv-tokens"]) };
  const rows: string[][] = [];
  let idleP99 = Number.NaN;
  for (const load of loads) {
    const n = requests === undefined ? {} : { requests };
    const w = await loadWorkload(
      workload,
      isTrace ? { rate: 1, speed: load, seed, ...n } : { rate: load, seed, ...n },
    );
    const p = prepareWorkload(w);
    const r = simulatePolicy(p, fleet, policy!, routerFactory(policy!, p.blockTokens));
    if (Number.isNaN(idleP99)) idleP99 = r.ttftP99Ms;
    const row = [
      isTrace ? `speed ${load}` : `${load} req/s`,
      fmtMs(r.ttftP50Ms),
      fmtMs(r.ttftP99Ms),
      fmtNum(r.ttftP99Ms / idleP99, 2),
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
    `# Load sweep: ${workload}, ${backends} backends of ${fleet.preset}, ${policy}`,
    "",
    "```",
    cmd,
    "```",
    "",
    `Machine: ${machine()}. Idle = the first load's p99 TTFT (${fmtMs(idleP99)}).`,
    "",
    table(["load", "TTFT p50", "TTFT p99", "p99 / idle p99", "hit rate", "fleet in-flight (avg)"], rows),
    "",
  ].join("\n");
  if (values.out !== undefined) await writeFile(values.out, md);
  else console.log(md);
}

main(process.argv.slice(2)).catch((e: unknown) => {
  console.error(`sweep: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
});
