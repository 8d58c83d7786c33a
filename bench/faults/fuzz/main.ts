/**
 * `npm run bench:fuzz`: a bounded, seeded fuzz pass over the real gateway
 * bundle in workerd (bench/faults/rig.ts: 4 emulated vLLM backends on free
 * loopback ports, on a thread of their own; workerd on a free port;
 * everything stopped at the end).
 *
 * Per seed: K well-formed streaming clients run closed-loop (steady-clients.ts)
 * while M fuzzing clients send N strange requests in a seeded mix (cases.ts).
 * Then the gateway must be healthy (health.ts). Exits 1 when any steady
 * answer was not whole and right, any fuzzed request hung, got a 5xx, a 4xx
 * outside OpenAI's error shape, or leaked a backend's address or key or a
 * stack trace, or the gateway was not healthy afterwards. A large upload the
 * gateway refuses mid-body (413, then a close: EPIPE on our write) is judged
 * on the answer it sent (upload.ts); a close with no answer stays a failure. Writes a JSON
 * summary (--out) that bench/results/fuzz-pass.md reads from.
 *
 *   npm run bench:fuzz -- [--seeds 1,2,3] [--cases 600] [--fuzzers 6] [--clients 8] [--out file.json]
 *   (FUZZ_LOG_DIR=DIR keeps each seed's gateway log as DIR/seed-N.log: the rig deletes it at the end)
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Rng } from "../../../sim/workloads/prng";
import { bundleWorker } from "../../e2e/gateway";
import { ADMIN_TOKEN, EMULATOR_KEY, startIsolatedRig } from "../rig";
import type { FuzzCase } from "./case-types";
import { caseSource, grammarBodies } from "./cases";
import { checkHealth, type HealthReport } from "./health";
import { runCase } from "./run-case";
import type { CaseOutcome } from "./send";
import { referenceAnswers, startSteady, steadyBodies } from "./steady-clients";
import { reconcileUploads } from "./upload";

const STEADY_KEY = "fuzz-steady-client-key";
const FUZZ_KEY = "fuzz-fuzzing-client-key";
/** The fuzzing key's own in-flight cap: its requests go through the KeyLimiterDO, and the check afterwards fills it. */
const FUZZ_KEY_CAP = 12;
/** How long the gateway may take to show no request in flight, and to free the key's slots (KEY_SLOT_TTL_MS is 30 s). */
const HEALTH_DEADLINE_MS = 45_000;

interface Args {
  readonly seeds: readonly number[];
  readonly cases: number;
  readonly fuzzers: number;
  readonly clients: number;
  readonly out?: string;
}

function parse(argv: readonly string[]): Args {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      seeds: { type: "string", default: "1" },
      cases: { type: "string", default: "600" },
      fuzzers: { type: "string", default: "6" },
      clients: { type: "string", default: "8" },
      out: { type: "string" },
    },
  });
  const int = (name: string, v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got "${v}"`);
    return n;
  };
  return {
    seeds: values.seeds.split(",").map((s) => int("seeds", s.trim())),
    cases: int("cases", values.cases),
    fuzzers: int("fuzzers", values.fuzzers),
    clients: int("clients", values.clients),
    ...(values.out !== undefined ? { out: values.out } : {}),
  };
}

/** Adds one to `table[row][column]`. */
function count(table: Record<string, Record<string, number>>, row: string, column: string): void {
  const r = table[row] ?? {};
  r[column] = (r[column] ?? 0) + 1;
  table[row] = r;
}

/** Counts of the request log's fields that say something went other than plainly (RequestLogFields, src/worker/log.ts). */
function logMarks(lines: readonly string[]): Record<string, number> {
  const marks: Record<string, number> = {};
  const add = (k: string): void => {
    marks[k] = (marks[k] ?? 0) + 1;
  };
  for (const l of lines) {
    if (!l.startsWith("{")) continue;
    for (const m of l.matchAll(/"(failure|concurrencyFailOpen|rateLimitFailOpen|reason)":"([^"]*)"/g))
      add(`${m[1]}=${m[2]}`);
    if (l.includes('"retriedFrom":')) add("retried");
    if (l.includes('"retryRefused":true')) add("retryRefused");
    if (l.includes('"aborted":true')) add("aborted");
    if (l.includes('"backendError":true')) add("backendError");
  }
  return marks;
}

/** A case's family, for the tallies: mutated and grammar bodies by kind, the rest by their label's head. */
function family(label: string): string {
  if (label.startsWith("chat:") || label.startsWith("cmpl:")) return "mutated body";
  if (label.startsWith("grammar:")) return "grammar body";
  if (label.startsWith("method/path")) return "method/path";
  return label.replace(/^\d+ streams/, "N streams");
}

interface SeedResult {
  readonly seed: number;
  readonly cases: number;
  readonly requests: number;
  readonly steadyRequests: number;
  readonly steadyViolations: readonly string[];
  /** family → status → count. */
  readonly tally: Record<string, Record<string, number>>;
  /** family → error.code of its 4xx answers → count. */
  readonly codes: Record<string, Record<string, number>>;
  /** family → slowest answer, ms. */
  readonly slowestMs: Record<string, number>;
  readonly runtimeAnswers: number;
  readonly problems: readonly string[];
  /** Every case: label, status, ms (for a second look at slow or odd ones). */
  readonly outcomes: readonly { label: string; status: CaseOutcome["status"]; ms: number; code?: string }[];
  readonly health: HealthReport;
  /** Worker log lines with a 5xx status or an uncaught exception. */
  readonly logFaults: readonly string[];
  /** Lines where workerd found no connect() handler for a CONNECT request (its own refusal, judge.ts). */
  readonly runtimeConnectLines: number;
  /** Worker log lines of requests (one JSON object each): that the log was read at all. */
  readonly logRequests: number;
  /** Request log lines by a field worth a look: a backend failure, a retry, a fail-open, a client that left, each route reason. */
  readonly logMarks: Record<string, number>;
  /** Longest delay of this process's event loop (the clients and judge) while the cases ran, ms. */
  readonly driverMaxLagMs: number;
  readonly seconds: number;
}

async function runSeed(
  seed: number,
  a: Args,
  configPath: string,
  log: (s: string) => void,
): Promise<SeedResult> {
  const t0 = performance.now();
  // The emulators on a thread of their own: a backend busy with one prompt must not stall this loop's
  // clients and judge (faults-11: a 3.5 M-space prompt froze every answer here for ~25 s).
  const rig = await startIsolatedRig({
    emulators: 4,
    configPath,
    gatewayKeys: `${STEADY_KEY}, ${FUZZ_KEY} max_concurrent=${FUZZ_KEY_CAP}`,
  });
  try {
    const secrets = {
      needles: [
        EMULATOR_KEY,
        ADMIN_TOKEN,
        ...rig.emulators.urls.flatMap((u) => {
          const port = new URL(u).port;
          return [`127.0.0.1:${port}`, `localhost:${port}`];
        }),
      ],
    };
    const bodies = steadyBodies(seed, 24);
    const refs = await referenceAnswers(rig.emulators.urls[0]!, EMULATOR_KEY, bodies);
    log(`seed ${seed}: gateway ${rig.url}, ${bodies.length} steady bodies with their answers alone`);

    const rng = new Rng(`fuzz/cases/${seed}`);
    const source = caseSource(
      rng,
      { fuzzKey: FUZZ_KEY, adminToken: ADMIN_TOKEN },
      grammarBodies(seed, Math.ceil(a.cases * 0.2)),
    );
    const steady = startSteady({
      url: rig.url,
      apiKey: STEADY_KEY,
      bodies,
      refs,
      clients: a.clients,
      timeoutMs: 60_000,
    });

    const outcomes: CaseOutcome[] = [];
    let taken = 0;
    let requests = 0;
    const run = (c: FuzzCase): Promise<CaseOutcome> => {
      requests += c.kind === "burst" ? c.streams.length : 1;
      return runCase(rig.url, c, secrets);
    };
    const fuzzer = async (): Promise<void> => {
      while (taken < a.cases) {
        taken++;
        const o = await run(source.next());
        outcomes.push(o);
        if (outcomes.length % 100 === 0) log(`seed ${seed}: ${outcomes.length}/${a.cases} cases`);
      }
    };
    // How late this loop's timers ran while the cases were out: the judge's own stalls, apart from the gateway's.
    const lag = monitorEventLoopDelay({ resolution: 20 });
    lag.enable();
    await Promise.all(Array.from({ length: a.fuzzers }, () => fuzzer()));
    lag.disable();
    const st = await steady.stop();
    log(`seed ${seed}: fuzz done, ${st.requests} steady requests; checking health`);
    const health = await checkHealth(rig.url, ADMIN_TOKEN, FUZZ_KEY, FUZZ_KEY_CAP, HEALTH_DEADLINE_MS);

    const logText = await readFile(rig.gateway.logFile, "utf8").catch(() => "");
    // The rig deletes its log with its temp dir; a failing seed is only explainable with it (FUZZ_LOG_DIR keeps it).
    const keepDir = process.env.FUZZ_LOG_DIR;
    if (keepDir !== undefined && keepDir !== "") await writeFile(join(keepDir, `seed-${seed}.log`), logText);
    const lines = logText.split("\n");
    // Uploads whose answer a reset destroyed: the gateway's log says whether it answered them.
    const judged = reconcileUploads(outcomes, lines);

    const tally: Record<string, Record<string, number>> = {};
    const codes: Record<string, Record<string, number>> = {};
    const slowestMs: Record<string, number> = {};
    for (const o of judged) {
      const f = family(o.label);
      count(
        tally,
        f,
        `${o.status}${o.origin === "runtime" ? " (runtime)" : ""}${o.writeError !== undefined ? ` after our ${o.writeError}` : ""}${o.unansweredId !== undefined ? " (answer lost; from the log)" : ""}`,
      );
      slowestMs[f] = Math.max(slowestMs[f] ?? 0, Math.round(o.ms));
      if (o.code !== undefined) count(codes, f, o.code);
    }
    const connect = /Handler does not export a connect\(\) function/;
    const logFaults = lines
      .filter((l) => /"status":5\d\d|Uncaught|internal_error/.test(l) && !connect.test(l))
      .map((l) => l.slice(0, 400));
    return {
      seed,
      cases: judged.length,
      requests,
      steadyRequests: st.requests,
      steadyViolations: st.violations,
      tally,
      codes,
      slowestMs,
      runtimeAnswers: judged.filter((o) => o.origin === "runtime").length,
      problems: judged.flatMap((o) => o.problems.map((p) => `${o.label.slice(0, 120)}: ${p}`)),
      outcomes: judged.map((o) => ({
        label: o.label.slice(0, 160),
        status: o.status,
        ms: Math.round(o.ms),
        ...(o.code !== undefined ? { code: o.code } : {}),
      })),
      health,
      logFaults,
      runtimeConnectLines: lines.filter((l) => connect.test(l)).length,
      logRequests: lines.filter((l) => l.startsWith("{") && l.includes('"status":')).length,
      logMarks: logMarks(lines),
      driverMaxLagMs: Math.round(lag.max / 1e6),
      seconds: Math.round((performance.now() - t0) / 1000),
    };
  } finally {
    await rig.close();
  }
}

async function main(argv: readonly string[]): Promise<number> {
  const a = parse(argv);
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const bundle = await bundleWorker();
  const results: SeedResult[] = [];
  try {
    for (const seed of a.seeds) results.push(await runSeed(seed, a, bundle.configPath, log));
  } finally {
    await bundle.dispose();
  }
  let failed = false;
  for (const r of results) {
    const bad = [...r.steadyViolations, ...r.problems, ...r.health.problems, ...r.logFaults];
    failed ||= bad.length > 0;
    log(
      `seed ${r.seed}: ${r.cases} cases (${r.requests} requests) in ${r.seconds} s beside ${r.steadyRequests} steady streams; ` +
        `${r.steadyViolations.length} steady violations, ${r.problems.length} fuzz problems, ${r.health.problems.length} health problems, ` +
        `${r.logFaults.length} 5xx/uncaught log lines (of ${r.logRequests} request lines); drained in ${r.health.drainedMs?.toFixed(0)} ms, slots free in ${r.health.slotsFreeMs?.toFixed(0)} ms; ` +
        `driver's loop late by ${r.driverMaxLagMs} ms at most`,
    );
    log(
      `  log: ${Object.entries(r.logMarks)
        .sort()
        .map(([k, n]) => `${k}×${n}`)
        .join(" ")}`,
    );
    for (const [f, row] of Object.entries(r.tally).sort())
      log(
        `  ${f.padEnd(44)} ${Object.entries(row)
          .map(([s, n]) => `${s}×${n}`)
          .join(" ")}  slowest ${r.slowestMs[f]} ms` +
          `  codes: ${Object.entries(r.codes[f] ?? {})
            .map(([c, n]) => `${c}×${n}`)
            .join(" ")}`,
      );
    for (const p of bad.slice(0, 40)) log(`  PROBLEM ${p}`);
  }
  if (a.out !== undefined) await writeFile(a.out, `${JSON.stringify({ args: a, results }, null, 1)}\n`);
  log(failed ? "fuzz pass FAILED" : "fuzz pass passed");
  return failed ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(2);
  },
);
