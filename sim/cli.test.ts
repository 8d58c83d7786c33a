import { constants } from "node:buffer";
import { spawnSync } from "node:child_process";
import { closeSync, ftruncateSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { type CliIO, LARGE_TRACE_REQUESTS, largeTraceNote, simulateCommand, size } from "./cli";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "..");
const node = join(repo, "node_modules/.bin/node");
const bin = join(repo, "bin/prefix-gateway.mjs");
const fixture = join(here, "fixtures/openai-log-small.jsonl");

/** A CliIO that keeps what the command writes. */
function capture(): CliIO & { text(): string; errText(): string } {
  let out = "";
  let err = "";
  return { out: (s) => (out += s), err: (s) => (err += s), text: () => out, errText: () => err };
}

/** 80 Mooncake lines, 40 conversations behind one shared block 1 (families are keyed on the block after it). */
function conversationsTrace(prefix: string): { dir: string; trace: string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const trace = join(dir, "mc.jsonl");
  writeFileSync(
    trace,
    Array.from(
      { length: 80 },
      (_, i) =>
        `{"timestamp": ${i * 50}, "input_length": 1100, "output_length": 4, "hash_ids": [1, ${100 + (i % 40)}, ${1000 + i}]}`,
    ).join("\n"),
  );
  return { dir, trace };
}

function run(...args: string[]) {
  const r = spawnSync(node, [bin, ...args], { cwd: repo, encoding: "utf8", timeout: 120_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe("prefix-gateway simulate (spawned)", () => {
  it("prints exactly one JSON object with every policy's figures and the malformed count", () => {
    const r = run("simulate", "--trace", fixture, "--backends", "3", "--json");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as {
      requests: number;
      malformed: number;
      policies: Record<string, Record<string, number>>;
    };
    expect(j.requests).toBe(60);
    expect(j.malformed).toBe(2);
    expect(Object.keys(j.policies)).toEqual(
      expect.arrayContaining([
        "prefix_aware",
        "least_outstanding",
        "round_robin",
        "sglang",
        "llmd",
        "dynamo",
        "sagemaker",
      ]),
    );
    for (const p of Object.values(j.policies)) {
      for (const k of [
        "hitRate",
        "oracleHitRate",
        "ttftP50Ms",
        "ttftP90Ms",
        "ttftP99Ms",
        "e2eP50Ms",
        "e2eP99Ms",
        "maxLoadRatio",
      ])
        expect(Number.isFinite(p[k]), k).toBe(true);
      expect(p.ttftP50Ms).toBeLessThanOrEqual(p.ttftP99Ms!);
      expect(p.hitRate).toBeLessThanOrEqual(1);
    }
    // Three shared system prompts over three backends: routing by prefix must hit more than round robin.
    expect(j.policies.prefix_aware!.hitRate).toBeGreaterThan(j.policies.round_robin!.hitRate!);
  }, 120_000);

  it("prints a table and a verdict without --json", () => {
    const r = run(
      "simulate",
      "--trace",
      fixture,
      "--backends",
      "2",
      "--policies",
      "prefix_aware,round_robin",
    );
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/\| prefix_aware +\|/);
    expect(r.out).toMatch(/prefix_aware would (cut|raise)/);
    expect(r.out).toMatch(/2 malformed lines skipped/);
  }, 120_000);

  it("counts malformed lines in a Mooncake trace and fails clearly when nothing is valid", () => {
    const dir = mkdtempSync(join(tmpdir(), "pg-cli-"));
    const ok = join(dir, "mc.jsonl");
    writeFileSync(
      ok,
      [
        '{"timestamp": 0, "input_length": 1100, "output_length": 20, "hash_ids": [1, 2, 3]}',
        '{"timestamp": 10, "input_length": 1100, "output_length": 20, "hash_ids": [1, 2, 4]}',
        '{"timestamp": 20, "input_length": 5, "output_length": 20, "hash_ids": [1, 2, 4]}',
        "{broken",
      ].join("\n"),
    );
    const r = run("simulate", "--trace", ok, "--backends", "2", "--policies", "round_robin", "--json");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ requests: 2, malformed: 2 });
    const bad = join(dir, "bad.jsonl");
    writeFileSync(bad, "nope\n");
    const b = run("simulate", "--trace", bad, "--backends", "2");
    expect(b.code).toBe(1);
    expect(b.err).toMatch(/no valid request.*1 malformed/);
  }, 120_000);

  it("rejects bad flags, unknown policies and a missing file with a clear message", () => {
    expect(run("simulate", "--trace", fixture).err).toMatch(/--backends is required/);
    expect(run("simulate", "--trace", fixture, "--backends", "0").err).toMatch(
      /--backends must be a positive/,
    );
    expect(run("simulate", "--trace", fixture, "--backends", "2", "--policies", "magic").err).toMatch(
      /unknown policy "magic"/,
    );
    expect(run("simulate", "--trace", fixture, "--backends", "2", "--bogus").code).toBe(2);
    const missing = run("simulate", "--trace", "/nonexistent/x.jsonl", "--backends", "2");
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/cannot read trace file/);
    const help = run("simulate", "--help");
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/--kv-tokens/);
  }, 120_000);
});

describe("prefix-gateway simulate on a trace it cannot hold (in-process)", () => {
  async function errOf(trace: string): Promise<{ code: number; err: string }> {
    let err = "";
    const code = await simulateCommand(["--trace", trace, "--backends", "2"], {
      out: () => {},
      err: (s) => (err += s),
    });
    return { code, err };
  }

  it("refuses a device or a pipe at once rather than read it to the runtime's string limit", async () => {
    // Before: /dev/zero was read to ~512 MiB (~650 MB resident), then "Invalid string length".
    const r = await errOf("/dev/zero");
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/cannot read trace file "\/dev\/zero": not a regular file/);
    expect((await errOf(tmpdir())).err).toMatch(/not a regular file/);
  });

  it("refuses a file past the longest string it can make, naming its size and the ways out", async () => {
    // A sparse file one byte past the limit: no disk used. Before: read whole, then V8's bare message.
    const dir = mkdtempSync(join(tmpdir(), "pg-cli-huge-"));
    const huge = join(dir, "huge.jsonl");
    const fd = openSync(huge, "w");
    ftruncateSync(fd, constants.MAX_STRING_LENGTH + 1);
    closeSync(fd);
    try {
      const r = await errOf(huge);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/512 MiB, more than simulate can hold \(512 MiB/);
      expect(r.err).toMatch(/head -n 100000/);
      expect(r.err).toMatch(/prefix-gateway analyze/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("prefix-gateway simulate --sample-families (in-process)", () => {
  const { dir, trace } = conversationsTrace("pg-cli-sf-");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("replays whole sampled families and says so", async () => {
    const io = capture();
    const code = await simulateCommand(
      [
        "--trace",
        trace,
        "--backends",
        "2",
        "--policies",
        "round_robin",
        "--sample-families",
        "1/2",
        "--json",
      ],
      io,
    );
    expect(io.errText()).toBe("");
    expect(code).toBe(0);
    const requests = (JSON.parse(io.text()) as { requests: number }).requests;
    // Each family has exactly 2 requests: an odd count would mean a family was split.
    expect(requests % 2).toBe(0);
    expect(requests).toBeGreaterThan(0);
    expect(requests).toBeLessThan(80);
    const table = capture();
    await simulateCommand(
      ["--trace", trace, "--backends", "2", "--policies", "round_robin", "--sample-families", "0.5"],
      table,
    );
    expect(table.text()).toMatch(
      new RegExp(`families sampled at 1/2 \\(${requests / 2} of 40 kept, SHARDS\\)`),
    );
  });

  it("runs every backend on the --preset named, and lists the presets", async () => {
    const run = async (...extra: string[]) => {
      const io = capture();
      const code = await simulateCommand(
        ["--trace", trace, "--backends", "2", "--policies", "round_robin", ...extra],
        io,
      );
      return { code, out: io.text(), err: io.errText() };
    };
    expect((await run("--preset", "qwen3-30b-a3b-h100-vllm")).out).toMatch(
      /2 backends × qwen3-30b-a3b-h100-vllm \(132096 KV tokens\)/,
    );
    expect((await run("--preset", "qwen3-30b-a3b-h100-vllm", "--kv-tokens", "65536")).out).toMatch(
      /\(65536 KV tokens\)/,
    );
    const bad = await run("--preset", "gpt-9");
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--preset: unknown engine preset "gpt-9": use llama-3.1-8b-h100-vllm, /);
    const help = capture();
    await simulateCommand(["--help"], help);
    expect(help.text()).toMatch(/--preset NAME .*llama-3.1-70b-4xh100-vllm, qwen3-30b-a3b-h100-vllm/);
  });

  it("rejects a rate outside (0, 1] and documents KV scaling", async () => {
    const io = capture();
    expect(await simulateCommand(["--trace", trace, "--backends", "2", "--sample-families", "2"], io)).toBe(
      2,
    );
    expect(io.errText()).toMatch(/--sample-families: sampling rate must be in \(0, 1\]/);
    const help = capture();
    await simulateCommand(["--help"], help);
    expect(help.text()).toMatch(/--kv-tokens R x T/);
  });
});

describe("prefix-gateway simulate on a long trace (in-process)", () => {
  const { dir, trace } = conversationsTrace("pg-cli-long-");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const args = ["--trace", trace, "--backends", "2", "--policies", "round_robin,least_outstanding"];

  it("--max-requests replays the first N requests, says how much of the file it read, and rejects 0", async () => {
    const json = capture();
    expect(await simulateCommand([...args, "--max-requests", "10", "--json"], json)).toBe(0);
    const j = JSON.parse(json.text()) as { requests: number; window: Record<string, number> };
    expect(j.requests).toBe(10);
    expect(j.window).toMatchObject({ maxRequests: 10, linesRead: 10 });
    // Read in 1 MiB chunks, so this small file is read whole (trace-file.test.ts shows reading stop early).
    expect(j.window.bytesRead).toBeLessThanOrEqual(j.window.bytes!);
    const text = capture();
    expect(await simulateCommand([...args, "--max-requests", "10"], text)).toBe(0);
    expect(text.text()).toMatch(/^10 requests from /);
    expect(text.text()).toMatch(
      /--max-requests 10: the first 10 requests in file order \(lines 1–10, [\d.]+ KiB of [\d.]+ KiB\); the rest of the file was not read\./,
    );
    // A window past the end is the whole trace, without a window note.
    const all = capture();
    expect(await simulateCommand([...args, "--max-requests", "1000", "--json"], all)).toBe(0);
    expect(JSON.parse(all.text())).not.toHaveProperty("window");
    expect((JSON.parse(all.text()) as { requests: number }).requests).toBe(80);
    const zero = capture();
    expect(await simulateCommand([...args, "--max-requests", "0"], zero)).toBe(2);
    expect(zero.errText()).toMatch(/--max-requests must be a positive/);
    const help = capture();
    await simulateCommand(["--help"], help);
    expect(help.text()).toMatch(/--max-requests N +replay only the first N valid requests/);
  });

  it("prints its progress on stderr when a run is slow: reading, hashing, each policy's requests replayed", async () => {
    // Each look at the clock is 6 s later, past the 5 s interval: every report is printed.
    let now = 0;
    const io = capture();
    const code = await simulateCommand([...args, "--json"], io, () => (now += 6_000));
    expect(code).toBe(0);
    const err = io.errText();
    expect(err).toMatch(
      /^prefix-gateway simulate: reading .*mc\.jsonl: [\d.]+ KiB of [\d.]+ KiB, \d+ requests \(\d+s\)$/m,
    );
    expect(err).toMatch(
      /^prefix-gateway simulate: hashing the prompts' blocks: 80 of 80 requests \(\d+s\)$/m,
    );
    expect(err).toMatch(
      /^prefix-gateway simulate: round_robin \(policy 1 of 2\): 80 of 80 requests replayed \(100%\) \(\d+s\)$/m,
    );
    expect(err).toMatch(/^prefix-gateway simulate: least_outstanding \(policy 2 of 2\): 80 of 80 requests/m);
    // stdout is the JSON alone.
    expect(JSON.parse(io.text())).toMatchObject({ requests: 80 });
    // A quick run says nothing on stderr.
    const quick = capture();
    await simulateCommand([...args, "--json"], quick);
    expect(quick.errText()).toBe("");
  });

  it("says before a whole replay of a large trace that it is one, and how to replay a window", () => {
    expect(largeTraceNote(LARGE_TRACE_REQUESTS, 9, undefined)).toBeUndefined();
    expect(largeTraceNote(1_400_000, 9, 20_000)).toBeUndefined();
    expect(largeTraceNote(1_400_000, 9, undefined)).toMatch(
      /replaying all 1,400,000 requests under each of 9 policies, one after another: .*--max-requests N replays only the first N/,
    );
    expect(largeTraceNote(LARGE_TRACE_REQUESTS + 1, 1, undefined)).toMatch(/under each of 1 policy,/);
  });

  it("writes sizes in the unit that reads best", () => {
    expect([size(812), size(40 * 1024), size(3.25 * 2 ** 20), size(125.4 * 2 ** 20)]).toEqual([
      "812 B",
      "40 KiB",
      "3.3 MiB",
      "125 MiB",
    ]);
  });
});
