/**
 * Micro-benchmark: one operation = prefixKeysForRequest() for one chat
 * request (canonical prompt → o200k tokens, capped at PREFIX_TOKENS → chained block
 * keys), in a warm isolate. The figures that matter are the medians for an
 * 8k-token prompt: ≤ 1 ms when its system prompt was seen before (memo hit;
 * only the new question is tokenized), ≤ 8 ms when nothing was seen.
 *
 *   npm run bench:micro:prefix-keys [-- --quick]
 *
 * Writes bench/results/micro-prefix-keys.md. Prompts: 90% system prompt,
 * 10% user question, windows of real text (bench/micro/text-source.ts).
 * Node's V8 is the engine workerd runs; absolute numbers differ by CPU.
 */
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { type ChatBody, prefixKeysForRequest, prefixMemoStats } from "../../src/prefix/request-keys";
import { SETTINGS } from "../../src/routing/defaults";
import { summarize } from "../latency-summary";
import { textOfTokens } from "./text-source";

const quick = process.argv.includes("--quick");
const opts = { model: "bench-model", blockTokens: 16, prefixTokens: SETTINGS.PREFIX_TOKENS.default };
const SIZES = [1024, 8192, 32768, 65536];

function chat(system: string, question: string): ChatBody {
  return {
    messages: [
      { role: "system", content: system },
      { role: "user", content: question },
    ],
  };
}

interface Row {
  size: number;
  scenario: string;
  median: number;
  p90: number;
  min: number;
  cpuMedian: number;
  promptTokens: number;
  blocks: number;
  runs: number;
}

function time(bodies: readonly ChatBody[], size: number, scenario: string): Row {
  const ms: number[] = [];
  const cpu: number[] = [];
  let last = { blocks: [] as number[], promptTokens: 0 };
  for (const body of bodies) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    last = prefixKeysForRequest("chat", body, opts);
    ms.push(performance.now() - t0);
    const c1 = process.cpuUsage(c0);
    cpu.push((c1.user + c1.system) / 1000);
  }
  const wall = summarize(ms);
  return {
    size,
    scenario,
    median: wall.p50,
    p90: wall.p90,
    min: wall.min,
    cpuMedian: summarize(cpu).p50,
    promptTokens: last.promptTokens,
    blocks: last.blocks.length,
    runs: ms.length,
  };
}

let offset = 0;
/** Distinct windows of the corpus: every call returns text never returned before. */
function fresh(tokens: number): string {
  offset += 7919;
  return textOfTokens(tokens, offset);
}

const rows: Row[] = [];
const loadBefore = loadavg()[0]!;
// Warm the JIT and build the tokenizer (cold start is bench/micro/cold-start.ts's job).
for (let i = 0; i < 8; i++) prefixKeysForRequest("chat", chat(fresh(2000), fresh(200)), opts);

for (const size of SIZES) {
  const runs = quick ? 7 : size > 8192 ? 15 : 31;
  const sys = Math.round(size * 0.9);
  const q = size - sys;
  const unseen = Array.from({ length: runs }, () => chat(fresh(sys), fresh(q)));
  rows.push(time(unseen, size, "unseen (nothing memoized)"));
  const system = fresh(sys);
  prefixKeysForRequest("chat", chat(system, fresh(q)), opts); // the system prompt is now seen
  const seen = Array.from({ length: runs }, () => chat(system, fresh(q)));
  rows.push(time(seen, size, "system prompt seen (memo hit)"));
}

// The "before": js-tiktoken's own encode of an unseen 8k prompt, warm (constructor not counted).
const reference = new Tiktoken(o200kBase);
const refMs: number[] = [];
for (let i = 0; i < (quick ? 3 : 7); i++) {
  const text = `${fresh(7373)}\n${fresh(819)}`;
  const t0 = performance.now();
  reference.encode(text, [], []);
  refMs.push(performance.now() - t0);
}
const ref = summarize(refMs);

const fmt = (x: number) => x.toFixed(3);
const memo = prefixMemoStats();
const lines = [
  "# Micro-benchmark: prefix keys per request",
  "",
  `One operation: \`prefixKeysForRequest("chat", body, { blockTokens: 16, prefixTokens: ${opts.prefixTokens} })\` on a`,
  "warm isolate (tokenizer built, JIT warm). Prompts are 90% system prompt + 10% user question, cut",
  "from real text (package READMEs + TypeScript's lib.es5.d.ts). \"Unseen\": every request's text is",
  'new. "Seen": the system prompt was seen by an earlier request (memo hit); the question is new.',
  `Prompts past ${opts.prefixTokens} tokens (the default PREFIX_TOKENS) are keyed on their first ${opts.prefixTokens}; the rest is estimated (chars/4).`,
  "",
  `Command: \`npm run bench:micro:prefix-keys${quick ? " -- --quick" : ""}\` — Node ${process.version}, ${cpus()[0]?.model ?? "?"} (${cpus().length} vCPU, shared with other jobs: expect noise).`,
  "",
  `Load average (1 min) before/after: ${loadBefore.toFixed(2)} / ${loadavg()[0]!.toFixed(2)} on ${cpus().length} vCPU.`,
  'Wall time is inflated when the load exceeds the core count; "min" is the uncontended cost, and',
  '"CPU median" is process CPU time (process.cpuUsage, includes GC threads).',
  "",
  "| prompt | scenario | median ms | p90 ms | min ms | CPU median ms | runs | promptTokens | blocks |",
  "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
  ...rows.map(
    (r) =>
      `| ${r.size / 1024}k | ${r.scenario} | ${fmt(r.median)} | ${fmt(r.p90)} | ${fmt(r.min)} | ${fmt(r.cpuMedian)} | ${r.runs} | ${r.promptTokens} | ${r.blocks} |`,
  ),
  `| 8k | before: js-tiktoken \`encode()\` alone, unseen, warm | ${fmt(ref.p50)} | ${fmt(ref.p90)} | ${fmt(ref.min)} | | ${refMs.length} | | |`,
  "",
  "Targets (issue #4, Worker CPU): 8k seen ≤ 1 ms, 8k unseen ≤ 8 ms (medians).",
  "",
  `Memo after the run: ${memo.entries} entries, ${memo.tokens} tokens, ${memo.chars} chars; ${memo.hits} hits, ${memo.misses} misses, ${memo.evictions} evictions.`,
  "",
];
writeFileSync("bench/results/micro-prefix-keys.md", lines.join("\n"));
console.log(lines.join("\n"));
