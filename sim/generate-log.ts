/**
 * `npm run generate-log -- --workload W [--requests N] [--rate R] [--out FILE]`:
 * one of the simulator's generated workloads written as an OpenAI request
 * log (openai-log-writer.ts), to try `prefix-gateway analyze` and `simulate`
 * on a known kind of traffic: multi-turn chat shares most of its prompts,
 * no-shared-prefix nothing.
 */
import { createWriteStream } from "node:fs";
import type { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { countFlag, failure, parseFlags, positiveFlag, seedFlag, UsageError } from "./flags";
import { loadWorkload } from "./workloads/index";
import { openAILogLine } from "./workloads/openai-log-writer";

export const USAGE = `usage: npm run generate-log -- --workload W [options]

Writes a generated workload as an OpenAI request log (JSONL: timestamp, model,
messages, max_tokens), one request a line.

  --workload W   generated-shared-prefix | multi-turn | zipf | no-shared-prefix
  --requests N   requests (default 2000; generated-shared-prefix always has 1024)
  --rate R       requests per second (default 20)
  --seed S       (default 1)
  --model M      model name on every line (default llama-3.1-8b-instruct)
  --out FILE     where to write (default: stdout)
  -h, --help     this help
`;

const OPTIONS = {
  workload: { type: "string" },
  requests: { type: "string" },
  rate: { type: "string" },
  seed: { type: "string" },
  model: { type: "string" },
  out: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

export interface GenerateLogOptions {
  readonly workload: string;
  readonly requests: number;
  readonly rate: number;
  readonly seed: number;
  readonly model: string;
}

/** Writes the log; resolves with the number of lines once `out` has them all. */
export async function writeGeneratedLog(opts: GenerateLogOptions, out: Writable): Promise<number> {
  if (opts.workload === "mooncake" || opts.workload.startsWith("file:"))
    throw new UsageError(`--workload must be a generated workload, got "${opts.workload}"`);
  const w = await loadWorkload(opts.workload, { rate: opts.rate, seed: opts.seed, requests: opts.requests });
  for (const r of w.requests)
    if (!out.write(`${openAILogLine(r, opts.model)}\n`)) await new Promise((ok) => out.once("drain", ok));
  return w.requests.length;
}

export async function generateLogCommand(argv: string[]): Promise<number> {
  try {
    const v = parseFlags(argv, OPTIONS);
    if (v.help) {
      process.stdout.write(USAGE);
      return 0;
    }
    if (v.workload === undefined) throw new UsageError("--workload is required");
    const out = v.out === undefined ? process.stdout : createWriteStream(v.out);
    const n = await writeGeneratedLog(
      {
        workload: v.workload,
        requests: countFlag("requests", v.requests, 2000),
        rate: positiveFlag("rate", v.rate, 20),
        seed: seedFlag(v.seed),
        model: v.model ?? "llama-3.1-8b-instruct",
      },
      out,
    );
    if (out !== process.stdout) await new Promise<void>((ok) => out.end(() => ok()));
    process.stderr.write(`${n} requests written${v.out !== undefined ? ` to ${v.out}` : ""}\n`);
    return 0;
  } catch (e) {
    return failure(e, "generate-log", USAGE, (s) => process.stderr.write(s));
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1])
  process.exitCode = await generateLogCommand(process.argv.slice(2));
