/**
 * Cold start of prefix keys: what the first request in a fresh isolate pays
 * before its keys exist. One operation = a fresh process that loads the
 * tokenizer and keys one unseen ~8k-token chat prompt, then a second one.
 * Compared: js-tiktoken's `new Tiktoken(o200k_base)` + `encode()` (the
 * "before") and ours (src/prefix/tokenizer.ts via src/prefix/request-keys.ts).
 * The figure that matters: tokenizer build + first request, ms of CPU.
 *
 *   npm run bench:micro:cold-start -- [--runs 5] [--wrangler] [--workerd]
 *
 * Also bundles each variant with esbuild (wrangler's bundler) and reports
 * raw and gzip sizes; --wrangler additionally runs the real
 * `wrangler deploy --dry-run` on the Worker and reports its size.
 * Writes bench/results/cold-start.md. Each child process is timed with
 * performance.now() (V8, the engine workerd embeds); workerd's own clocks
 * stand still during synchronous CPU, see test/worker/prefix.test.ts.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { summarize } from "../latency-summary";

type Mode = "js-tiktoken" | "ours";
interface Timing {
  importMs: number;
  buildMs: number;
  firstMs: number;
  secondMs: number;
  /** Process CPU time of build + first request (process.cpuUsage): less sensitive to other jobs than wall time. */
  buildFirstCpuMs: number;
  tokens: number;
}

const SELF = fileURLToPath(import.meta.url);

async function child(mode: Mode, promptsFile: string): Promise<void> {
  const [a, b] = JSON.parse(readFileSync(promptsFile, "utf8")) as [string, string];
  const body = (q: string) => ({
    messages: [
      { role: "system", content: q.slice(0, q.length - 3000) },
      { role: "user", content: q.slice(-3000) },
    ],
  });
  let t = performance.now();
  const timing: Timing = { importMs: 0, buildMs: 0, firstMs: 0, secondMs: 0, buildFirstCpuMs: 0, tokens: 0 };
  let cpu0 = process.cpuUsage();
  const cpuSince = () => {
    const c = process.cpuUsage(cpu0);
    return (c.user + c.system) / 1000;
  };
  if (mode === "js-tiktoken") {
    const { Tiktoken } = await import("js-tiktoken/lite");
    const ranks = (await import("js-tiktoken/ranks/o200k_base")).default;
    timing.importMs = performance.now() - t;
    t = performance.now();
    cpu0 = process.cpuUsage();
    const enc = new Tiktoken(ranks);
    timing.buildMs = performance.now() - t;
    t = performance.now();
    timing.tokens = enc.encode(a, [], []).length;
    timing.firstMs = performance.now() - t;
    timing.buildFirstCpuMs = cpuSince();
    t = performance.now();
    enc.encode(b, [], []);
    timing.secondMs = performance.now() - t;
  } else {
    const { prefixKeysForRequest } = await import("../../src/prefix/request-keys");
    const { o200kTokenizer } = await import("../../src/prefix/tokenizer");
    timing.importMs = performance.now() - t;
    const opts = { model: "m", blockTokens: 16, prefixTokens: 8192 };
    t = performance.now();
    cpu0 = process.cpuUsage();
    o200kTokenizer();
    timing.buildMs = performance.now() - t;
    t = performance.now();
    timing.tokens = prefixKeysForRequest("chat", body(a), opts).promptTokens;
    timing.firstMs = performance.now() - t;
    timing.buildFirstCpuMs = cpuSince();
    t = performance.now();
    prefixKeysForRequest("chat", body(b), opts);
    timing.secondMs = performance.now() - t;
  }
  process.stdout.write(JSON.stringify(timing));
}

function bundleSize(entrySource: string, dir: string, name: string): { raw: number; gzip: number } {
  const entry = join(process.cwd(), "bench/micro", `.cold-start-entry-${name}.ts`);
  writeFileSync(entry, entrySource);
  try {
    const out = join(dir, `${name}.js`);
    execFileSync(
      process.execPath,
      [
        "-e",
        `require("esbuild").buildSync({ entryPoints: [${JSON.stringify(entry)}], bundle: true, format: "esm", platform: "neutral", mainFields: ["module","main"], conditions: ["workerd","worker","browser"], outfile: ${JSON.stringify(out)} })`,
      ],
      { stdio: "inherit" },
    );
    const bytes = readFileSync(out);
    return { raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
  } finally {
    execFileSync("rm", ["-f", entry]);
  }
}

function wranglerSize(): { raw: number; gzip: number; files: string } | undefined {
  const outdir = "/tmp/pgw-dist";
  const r = spawnSync("npx", ["wrangler", "deploy", "--dry-run", "--outdir", outdir], { encoding: "utf8" });
  if (r.status !== 0) return undefined;
  let raw = 0;
  let gzip = 0;
  const files: string[] = [];
  for (const f of readdirSync(outdir)) {
    if (!f.endsWith(".js")) continue;
    const bytes = readFileSync(join(outdir, f));
    raw += statSync(join(outdir, f)).size;
    gzip += gzipSync(bytes, { level: 9 }).length;
    files.push(f);
  }
  return { raw, gzip, files: files.join(", ") };
}

/** Runs the workerd test that times both constructors and returns its printed line. */
function workerdLine(): string | undefined {
  const r = spawnSync("npx", ["vitest", "run", "--project", "workers", "test/worker/prefix.test.ts"], {
    encoding: "utf8",
  });
  return /\[cold start in workerd\] ([^\n]*)/.exec(`${r.stdout}${r.stderr}`)?.[1];
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] === "--child") return child(args[1] as Mode, args[2]!);
  const runsAt = args.indexOf("--runs");
  const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 5;

  // Prompts are made here, so the children start with nothing built.
  const { textOfTokens } = await import("./text-source");
  const dir = mkdtempSync(join(tmpdir(), "pgw-cold-"));
  const promptsFile = join(dir, "prompts.json");
  writeFileSync(promptsFile, JSON.stringify([textOfTokens(8192, 1000), textOfTokens(8192, 90_000)]));

  const results: Record<Mode, Timing[]> = { "js-tiktoken": [], ours: [] };
  const load0 = loadavg()[0]!;
  for (let i = 0; i < runs; i++) {
    for (const mode of ["js-tiktoken", "ours"] as const) {
      const out = execFileSync(process.execPath, ["--import", "tsx", SELF, "--child", mode, promptsFile], {
        encoding: "utf8",
      });
      results[mode].push(JSON.parse(out) as Timing);
    }
  }
  const load1 = loadavg()[0]!;

  const ours = bundleSize(
    `export { prefixKeysForRequest } from "../../src/prefix/request-keys";\n`,
    dir,
    "ours",
  );
  const theirs = bundleSize(
    `import { Tiktoken } from "js-tiktoken/lite";\nimport ranks from "js-tiktoken/ranks/o200k_base";\nexport const make = () => new Tiktoken(ranks);\n`,
    dir,
    "js-tiktoken",
  );
  const worker = args.includes("--wrangler") ? wranglerSize() : undefined;
  const workerd = args.includes("--workerd") ? workerdLine() : undefined;

  const fmt = (x: number) => x.toFixed(1);
  const kb = (b: number) => `${(b / 1024).toFixed(0)} KiB`;
  const row = (mode: Mode, label: string) => {
    const r = results[mode];
    const m = (k: keyof Timing) => summarize(r.map((x) => x[k])).p50;
    return `| ${label} | ${fmt(m("importMs"))} | ${fmt(m("buildMs"))} | ${fmt(m("firstMs"))} | ${fmt(m("buildMs") + m("firstMs"))} | ${fmt(m("buildFirstCpuMs"))} | ${fmt(m("secondMs"))} |`;
  };
  const lines = [
    "# Cold start: o200k tokenizer and the first request's prefix keys",
    "",
    `Command: \`npm run bench:micro:cold-start -- --runs ${runs}${worker ? " --wrangler" : ""}${workerd ? " --workerd" : ""}\` — Node ${process.version} (V8, as in workerd), ${cpus()[0]?.model ?? "?"}, ${cpus().length} vCPU shared with other jobs (load average ${load0.toFixed(1)} → ${load1.toFixed(1)}: absolute figures are inflated and noisy; compare the rows).`,
    "",
    `Each run is a fresh process; medians of ${runs}. The first and second request are unseen chat prompts of ~8k o200k tokens (${results.ours[0]?.tokens ?? "?"} prompt tokens) cut from real text. "js-tiktoken" times \`new Tiktoken(o200k_base)\` and \`encode()\` alone (no keys); "ours" times \`o200kTokenizer()\` and then \`prefixKeysForRequest()\` (canonical prompt + tokens + memo + block keys).`,
    "",
    "| variant | import ms | build ms | first request ms | build + first ms | build + first, CPU ms | second request ms |",
    "|---|---:|---:|---:|---:|---:|---:|",
    row("js-tiktoken", "before: js-tiktoken lite + o200k_base ranks"),
    row("ours", "after: src/prefix/tokenizer.ts (typed-array vocab, lazy)"),
    "",
    ...(workerd
      ? [
          `Inside workerd (\`--workerd\`: test/worker/prefix.test.ts, via @cloudflare/vitest-plugin): ${workerd}. workerd's clocks stand still during synchronous CPU and jump at the next I/O, so the test reads Date.now() around the build and a 0 ms timer: build CPU + one timer turn, 1 ms resolution.`,
          "",
        ]
      : []),
    '"import" includes tsx\'s on-the-fly TypeScript transform for ours (not present in a bundled Worker) and, for both, parsing the 2.3 MB ranks module; in a Worker that parse happens when the script loads.',
    "",
    "## Bundle size (esbuild, as wrangler bundles; gzip -9)",
    "",
    "| what | raw | gzip |",
    "|---|---:|---:|",
    `| js-tiktoken lite + o200k_base ranks | ${kb(theirs.raw)} | ${kb(theirs.gzip)} |`,
    `| src/prefix/request-keys.ts (+ tokenizer, memo, canonical prompt, block keys, the same ranks) | ${kb(ours.raw)} | ${kb(ours.gzip)} |`,
    ...(worker
      ? [
          `| the whole Worker: \`wrangler deploy --dry-run --outdir /tmp/pgw-dist\` (${worker.files}) | ${kb(worker.raw)} | ${kb(worker.gzip)} |`,
        ]
      : []),
    "",
    "Workers limits: 3 MB (free) / 10 MB (paid) compressed. The ranks string dominates both variants: we ship the same data, decoded differently.",
    "",
  ];
  writeFileSync("bench/results/cold-start.md", lines.join("\n"));
  console.log(lines.join("\n"));
}

await main();
