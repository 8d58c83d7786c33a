/** Command line of `npm run bench:faults`. */
import { HelpRequested, parseFlags, UsageError } from "../../sim/flags";
import { DEFAULT_SOAK, type SoakOptions } from "./soak";

export interface FaultsArgs {
  /** Run the fault table instead of the soak. */
  readonly table: boolean;
  readonly soak: SoakOptions;
  /** Table: scenario ids to run (all when empty). */
  readonly only: readonly string[];
  /** Table: ordinary traffic before each fault, s. */
  readonly baselineS: number;
  /** Report path without extension (faults.md + faults.json). */
  readonly out: string;
  /** ROUTER_CELLS of the gateway under fault: RouterDO cells the pool is split into (1: one RouterDO). */
  readonly cells: number;
}

/** Backends in the BACKENDS secret of the soak and of every table scenario (rig.ts): the most cells a pool can have. */
export const FAULT_BACKENDS = 4;

export const USAGE = `npm run bench:faults -- [--duration-s 600] [--clients 20] [--flap-s 30] [--down-s 10]
  [--throttle-share 0.333] [--retry-after-s 1] [--sample-s 2] [--settle-s 10] [--rss-slope-mib-per-min 1]
  [--cells 1] [--out bench/results/faults]
npm run bench:faults -- --table [--only poison,hang,...] [--baseline-s 10] [--cells 1] [--out bench/results/faults]

--cells K  split the pool into K RouterDO cells (ROUTER_CELLS=K), an integer 1..${FAULT_BACKENDS} (the backends); default 1`;

function num(name: string, v: string | undefined, def: number, min = 0): number {
  if (v === undefined) return def;
  const n = Number(v);
  if (v.trim() === "" || !Number.isFinite(n) || n <= min)
    throw new UsageError(`--${name} must be a number > ${min}, got "${v}"`);
  return n;
}

/** --cells: an integer within 1..FAULT_BACKENDS (a cell needs a backend of its own); default 1. */
function cellsArg(v: string | undefined): number {
  if (v === undefined) return 1;
  const n = Number(v);
  if (!/^\s*\d+\s*$/.test(v) || !Number.isInteger(n) || n < 1 || n > FAULT_BACKENDS)
    throw new UsageError(`--cells must be an integer within 1..${FAULT_BACKENDS} (the backends), got "${v}"`);
  return n;
}

export function parseFaultsArgs(argv: readonly string[]): FaultsArgs {
  const values = parseFlags(argv, {
    table: { type: "boolean", default: false },
    only: { type: "string" },
    "baseline-s": { type: "string" },
    "duration-s": { type: "string" },
    clients: { type: "string" },
    "flap-s": { type: "string" },
    "down-s": { type: "string" },
    "throttle-share": { type: "string" },
    "retry-after-s": { type: "string" },
    "sample-s": { type: "string" },
    "settle-s": { type: "string" },
    "rss-slope-mib-per-min": { type: "string" },
    cells: { type: "string" },
    out: { type: "string", default: "bench/results/faults" },
    help: { type: "boolean", short: "h", default: false },
  });
  if (values.help) throw new HelpRequested();
  const d = DEFAULT_SOAK;
  const soak: SoakOptions = {
    durationS: num("duration-s", values["duration-s"], d.durationS),
    clients: Math.round(num("clients", values.clients, d.clients)),
    flapPeriodS: num("flap-s", values["flap-s"], d.flapPeriodS),
    downS: num("down-s", values["down-s"], d.downS),
    throttleShare: num("throttle-share", values["throttle-share"], d.throttleShare),
    retryAfterS: Math.round(num("retry-after-s", values["retry-after-s"], d.retryAfterS)),
    sampleEveryS: num("sample-s", values["sample-s"], d.sampleEveryS),
    settleS: num("settle-s", values["settle-s"], d.settleS),
    rssToleranceMiBPerMin: num(
      "rss-slope-mib-per-min",
      values["rss-slope-mib-per-min"],
      d.rssToleranceMiBPerMin,
    ),
  };
  if (soak.throttleShare > 1)
    throw new UsageError(`--throttle-share must be at most 1, got ${soak.throttleShare}`);
  if (soak.downS >= soak.flapPeriodS) throw new UsageError("--down-s must be shorter than --flap-s");
  return {
    table: values.table === true,
    soak,
    only: (values.only ?? "")
      .split(",")
      .map((x) => x.trim())
      .filter(Boolean),
    baselineS: num("baseline-s", values["baseline-s"], 10),
    out: values.out,
    cells: cellsArg(values.cells),
  };
}
