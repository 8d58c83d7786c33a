/**
 * Micro-benchmark: the work one hostile request causes at the edge. One
 * operation = `readInferenceBody` (read, size check, JSON, validation) then
 * `prefixKeysForRequest` (canonical prompt → tokens → block keys, cap 8192)
 * for one adversarial body of up to ~15 MiB, in a warm isolate (tokenizer
 * built, memo cleared before each case). The figure that matters is the
 * CPU ms of the worst case: while one request burns CPU, every other
 * request of the isolate waits.
 *
 *   npm run bench:micro:edge-bounds -- [--runs 3] [--json out.json] [--before before.json] [--md out.md]
 *
 * The "before" column comes from running this same file on the base commit
 * (its API, `readInferenceBody(req, kind)` and `prefixKeysForRequest`, did
 * not change); see bench/results/edge-bounds.md for the exact commands. Node's
 * V8 is the engine workerd embeds; absolute figures depend on the CPU.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { clearPrefixMemo, prefixKeysForRequest } from "../../src/prefix/request-keys";
import { readInferenceBody } from "../../src/worker/request/request-body";
import { summarize } from "../latency-summary";
import { textOfTokens } from "./text-source";

const MiB = 1024 * 1024;
const SIZE = 15 * MiB;
const opts = { model: "bench-model", blockTokens: 16, prefixTokens: 8192 };

type Kind = "chat" | "completions";

interface Case {
  readonly name: string;
  readonly kind: Kind;
  /** The JSON text of the body (built outside the timed region). */
  readonly body: () => string;
}

/** A chat body whose one user message is `n` bytes of `unit` (a JSON string fragment). */
function oneMessage(unit: string, unitBytes: number, bytes = SIZE): string {
  return `{"model":"m","max_tokens":4,"messages":[{"role":"user","content":"${unit.repeat(Math.floor(bytes / unitBytes))}"}]}`;
}

function repeatJoin(item: string, count: number): string {
  return Array.from({ length: count }, () => item).join(",");
}

const CASES: readonly Case[] = [
  {
    name: "ordinary 8k-token chat (baseline)",
    kind: "chat",
    body: () =>
      JSON.stringify({
        model: "m",
        max_tokens: 4,
        messages: [
          { role: "system", content: textOfTokens(7400, 1) },
          { role: "user", content: textOfTokens(800, 99_991) },
        ],
      }),
  },
  { name: "15 MiB of one letter ('a')", kind: "chat", body: () => oneMessage("a", 1) },
  { name: "15 MiB of spaces", kind: "chat", body: () => oneMessage(" ", 1) },
  { name: "15 MiB of '='", kind: "chat", body: () => oneMessage("=", 1) },
  { name: "15 MiB of one CJK char (长)", kind: "chat", body: () => oneMessage("长", 3) },
  { name: "15 MiB of one emoji (😀)", kind: "chat", body: () => oneMessage("😀", 4) },
  { name: "15 MiB of lone surrogates (\\ud800)", kind: "chat", body: () => oneMessage("\\ud800", 6) },
  {
    name: "100k small messages",
    kind: "chat",
    body: () =>
      `{"model":"m","max_tokens":4,"messages":[${repeatJoin('{"role":"user","content":"hello there, general"}', 100_000)}]}`,
  },
  {
    name: "500k content parts in one message",
    kind: "chat",
    body: () =>
      `{"model":"m","max_tokens":4,"messages":[{"role":"user","content":[${repeatJoin('{"type":"text","text":"ab"}', 500_000)}]}]}`,
  },
  {
    name: "120k content parts (within the JSON key bound)",
    kind: "chat",
    body: () =>
      `{"model":"m","max_tokens":4,"messages":[{"role":"user","content":[${repeatJoin('{"type":"text","text":"ab"}', 120_000)}]}]}`,
  },
  {
    name: "120k unknown content parts (within the JSON key bound)",
    kind: "chat",
    body: () =>
      `{"model":"m","max_tokens":4,"messages":[{"role":"user","content":[${repeatJoin('{"type":"x","v":[1]}', 120_000)}]}]}`,
  },
  {
    name: "500k unknown content parts",
    kind: "chat",
    body: () =>
      `{"model":"m","max_tokens":4,"messages":[{"role":"user","content":[${repeatJoin('{"type":"x","v":[1]}', 500_000)}]}]}`,
  },
  {
    name: "one tool with a 1M-value schema",
    kind: "chat",
    body: () =>
      `{"model":"m","max_tokens":4,"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"enum":[${repeatJoin("1", 1_000_000)}]}}}]}`,
  },
  {
    name: "tools nested 1M deep",
    kind: "chat",
    body: () =>
      `{"model":"m","max_tokens":4,"messages":[{"role":"user","content":"hi"}],"tools":[${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}]}`,
  },
  {
    name: "completions: 4M token ids",
    kind: "completions",
    body: () => `{"model":"m","max_tokens":4,"prompt":[${repeatJoin("7", 4_000_000)}]}`,
  },
];

interface Row {
  name: string;
  outcome: string;
  parseCpuMs: number;
  keyCpuMs: number;
  totalCpuMs: number;
  wallMs: number;
  promptTokens: number | null;
  blocks: number | null;
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
}

async function runCase(c: Case, text: string): Promise<Row> {
  clearPrefixMemo();
  const req = new Request("https://gateway.test/v1/x", {
    method: "POST",
    headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) },
    body: text,
  });
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  let outcome = "ok";
  let parseCpuMs = 0;
  let keyCpuMs = 0;
  let promptTokens: number | null = null;
  let blocks: number | null = null;
  try {
    const parsed = await readInferenceBody(req, c.kind);
    parseCpuMs = cpuMs(c0);
    const c1 = process.cpuUsage();
    const keys = prefixKeysForRequest(c.kind, parsed.body, opts);
    keyCpuMs = cpuMs(c1);
    promptTokens = keys.promptTokens;
    blocks = keys.blocks.length;
  } catch (err) {
    parseCpuMs = cpuMs(c0);
    const e = err as { status?: number; code?: string; name?: string; message?: string };
    outcome =
      e.status !== undefined ? `${e.status} ${e.code}` : `threw ${e.name}: ${String(e.message).slice(0, 40)}`;
  }
  return {
    name: c.name,
    outcome,
    parseCpuMs,
    keyCpuMs,
    totalCpuMs: cpuMs(c0),
    wallMs: performance.now() - t0,
    promptTokens,
    blocks,
  };
}

/** A body without content-length, `total` bytes long, pulled chunk by chunk: how much is read before the answer. */
async function streamedCase(
  total: number,
): Promise<Row & { pulledMiB: number; peakArrayBuffersMiB: number }> {
  const chunk = new Uint8Array(64 * 1024).fill(0x61);
  let pulled = 0;
  let peak = 0;
  const stream = new ReadableStream<Uint8Array>({
    start(ctl) {
      ctl.enqueue(new TextEncoder().encode('{"model":"m","messages":[{"role":"user","content":"'));
    },
    pull(ctl) {
      if (pulled >= total) return ctl.close();
      pulled += chunk.byteLength;
      peak = Math.max(peak, process.memoryUsage().arrayBuffers);
      ctl.enqueue(chunk.slice());
    },
  });
  const req = new Request("https://gateway.test/v1/x", {
    method: "POST",
    body: stream,
    duplex: "half",
  } as RequestInit & { duplex: "half" });
  const base = process.memoryUsage().arrayBuffers;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  let outcome = "ok";
  try {
    await readInferenceBody(req, "chat");
  } catch (err) {
    const e = err as { status?: number; code?: string; name?: string };
    outcome = e.status !== undefined ? `${e.status} ${e.code}` : `threw ${e.name}`;
  }
  const total_ = cpuMs(c0);
  return {
    name: `${total / MiB} MiB streamed, no content-length`,
    outcome,
    parseCpuMs: total_,
    keyCpuMs: 0,
    totalCpuMs: total_,
    wallMs: performance.now() - t0,
    promptTokens: null,
    blocks: null,
    pulledMiB: pulled / MiB,
    peakArrayBuffersMiB: (peak - base) / MiB,
  };
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const runs = Number(arg("--runs") ?? "1");
const loadBefore = loadavg()[0]!;
// Warm: build the tokenizer and JIT the hot paths on an ordinary request.
for (let i = 0; i < 3; i++) await runCase(CASES[0]!, CASES[0]!.body());

const rows: Row[] = [];
for (const c of CASES) {
  const text = c.body();
  const samples: Row[] = [];
  for (let i = 0; i < runs; i++) samples.push(await runCase(c, text));
  const median = (f: (r: Row) => number) => summarize(samples.map(f)).p50;
  const r: Row = {
    ...samples[0]!,
    parseCpuMs: median((r) => r.parseCpuMs),
    keyCpuMs: median((r) => r.keyCpuMs),
    totalCpuMs: median((r) => r.totalCpuMs),
    wallMs: median((r) => r.wallMs),
  };
  rows.push(r);
  console.error(`${r.name}: ${r.outcome}, ${r.totalCpuMs.toFixed(1)} ms CPU`);
}
const streamed = await streamedCase(200 * MiB);
console.error(`${streamed.name}: ${streamed.outcome}, pulled ${streamed.pulledMiB.toFixed(1)} MiB`);

const result = {
  node: process.version,
  cpu: cpus()[0]?.model ?? "?",
  vcpus: cpus().length,
  load: [loadBefore, loadavg()[0]!],
  runs,
  rows,
  streamed,
};
const jsonOut = arg("--json");
if (jsonOut !== undefined) writeFileSync(jsonOut, `${JSON.stringify(result, null, 2)}\n`);

const beforePath = arg("--before");
const before =
  beforePath !== undefined ? (JSON.parse(readFileSync(beforePath, "utf8")) as typeof result) : undefined;
const f = (x: number | null | undefined) => (x === null || x === undefined ? "" : x.toFixed(1));
const lines = [
  "| request | before: outcome | before: CPU ms | after: outcome | after: parse CPU ms | after: keys CPU ms | after: CPU ms | after: promptTokens | after: blocks |",
  "|---|---|---:|---|---:|---:|---:|---:|---:|",
  ...rows.map((r) => {
    const b = before?.rows.find((x) => x.name === r.name);
    return `| ${r.name} | ${b?.outcome ?? ""} | ${f(b?.totalCpuMs)} | ${r.outcome} | ${f(r.parseCpuMs)} | ${f(r.keyCpuMs)} | ${f(r.totalCpuMs)} | ${r.promptTokens ?? ""} | ${r.blocks ?? ""} |`;
  }),
  "",
  "| streamed body | before: outcome | before: MiB pulled | before: peak ArrayBuffer MiB | after: outcome | after: MiB pulled | after: peak ArrayBuffer MiB | after: CPU ms |",
  "|---|---|---:|---:|---|---:|---:|---:|",
  `| ${streamed.name} | ${before?.streamed.outcome ?? ""} | ${f(before?.streamed.pulledMiB)} | ${f(before?.streamed.peakArrayBuffersMiB)} | ${streamed.outcome} | ${f(streamed.pulledMiB)} | ${f(streamed.peakArrayBuffersMiB)} | ${f(streamed.totalCpuMs)} |`,
  "",
  `Node ${process.version}, ${result.cpu} (${result.vcpus} vCPU, shared), ${runs} run(s) per case (median), load average before/after ${loadBefore.toFixed(2)} / ${loadavg()[0]!.toFixed(2)}.`,
];
const mdOut = arg("--md");
if (mdOut !== undefined) writeFileSync(mdOut, `${lines.join("\n")}\n`);
console.log(lines.join("\n"));
