import { spawnSync } from "node:child_process";
import { createWriteStream, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import type { CliIO } from "../cli";
import { writeGeneratedLog } from "../generate-log";
import { gatewayLine, tailEvent, wranglerJson } from "../workloads/test-tail-events";
import { analyzeCommand } from "./cli";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../..");
const node = join(repo, "node_modules/.bin/node");
const bin = join(repo, "bin/prefix-gateway.mjs");
const openaiFixture = join(here, "../fixtures/openai-log-small.jsonl");
const dir = mkdtempSync(join(tmpdir(), "pg-analyze-"));
const NOT_A_TTY = { isTTY: false, write: () => true };

async function analyzeJson(
  ...argv: string[]
): Promise<{ code: number; json: Record<string, unknown>; err: string }> {
  let out = "";
  let err = "";
  const io: CliIO = {
    out: (s) => {
      out += s;
    },
    err: (s) => {
      err += s;
    },
  };
  const code = await analyzeCommand([...argv, "--json"], io, NOT_A_TTY);
  const lines = out.split("\n").filter((l) => l !== "");
  expect(lines, err).toHaveLength(1);
  return { code, json: JSON.parse(lines[0]!) as Record<string, unknown>, err };
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const mooncake = (t: number, input: number, ids: number[]) =>
  JSON.stringify({ timestamp: t, input_length: input, output_length: 16, hash_ids: ids });

/** The tiny Mooncake log of shared-prefixes.test.ts, two malformed lines among it. */
const tinyMooncake = [
  mooncake(0, 1024, [1, 2]),
  mooncake(100, 1300, [1, 2, 3]),
  "{not json",
  mooncake(200, 1000, [1, 4]),
  mooncake(300, 100, [5]),
  JSON.stringify({ timestamp: 350, input_length: 9999, output_length: 1, hash_ids: [1] }),
  mooncake(400, 1300, [1, 2, 3]),
  mooncake(500, 600, [1, 6]),
].join("\n");

describe("prefix-gateway analyze", () => {
  let multiTurnLog = "";
  let noSharingLog = "";

  beforeAll(async () => {
    const write = async (workload: string, requests: number): Promise<string> => {
      const path = join(dir, `${workload}.jsonl`);
      const out = createWriteStream(path);
      await writeGeneratedLog({ workload, requests, rate: 20, seed: 1, model: "m" }, out);
      await new Promise<void>((ok) => out.end(() => ok()));
      return path;
    };
    multiTurnLog = await write("multi-turn", 400);
    noSharingLog = await write("no-shared-prefix", 200);
  }, 60_000);

  it("prints one JSON object of the documented shape; malformed lines are counted, not fatal", async () => {
    const { code, json } = await analyzeJson(file("tiny.jsonl", tinyMooncake), "--backends", "2");
    expect(code).toBe(0);
    expect(json).toMatchObject({
      requests: 6,
      malformed: 2,
      promptTokens: 5324,
      sharedPrefixShare: 3348 / 5324,
      verdict: expect.stringMatching(/^(enable|skip)$/),
      estimate: {
        backends: 2,
        hitRate: expect.any(Number),
        ttftP50ChangePct: expect.any(Number),
        ttftP99ChangePct: expect.any(Number),
        prefillGpuSecondsSavedPerHour: expect.any(Number),
        requestsPerInstanceAtSlo: { prefix_aware: expect.any(Number), least_outstanding: expect.any(Number) },
      },
    });
    expect(json.malformedSamples).toEqual([
      "line 3: not JSON",
      expect.stringMatching(/^line 6: input_length 9999 does not fit 1 blocks/),
    ]);
  });

  it("reads an OpenAI request log", async () => {
    const { json } = await analyzeJson(openaiFixture, "--backends", "3");
    // Its "this line is not JSON" is text beside the log, skipped; the cut-off object is malformed.
    expect(json).toMatchObject({ requests: 60, malformed: 1, skippedLines: 1, formats: { openai: 60 } });
    // Three system prompts shared by 60 requests.
    expect(json.sharedPrefixShare).toBeGreaterThan(0.5);
  });

  it("reads the gateway's own log as wrangler tail --format json prints it", async () => {
    const system = Array.from({ length: 300 }, (_, i) => `Clause ${i}: be brief and exact.`).join(" ");
    const events: string[] = [];
    for (let i = 0; i < 6; i++) {
      const at = 1_767_225_600_000 + i * 1000;
      const line = await gatewayLine({
        requestId: `r${i}`,
        arrivedAt: at,
        system,
        user: `Question number ${i}: ${"why? ".repeat(50)}`,
        tenant: i < 4 ? "acme" : "globex",
      });
      events.push(wranglerJson(tailEvent([line], at)));
    }
    events.push(wranglerJson({ outcome: "ok", logs: [], eventTimestamp: 1, event: { scheduledTime: 1 } }));
    const { json } = await analyzeJson(file("tail.json", `${events.join("\n")}\n`), "--backends", "2");
    expect(json).toMatchObject({ requests: 6, malformed: 0, ignored: 1, formats: { gateway: 6 } });
    // acme's 2nd–4th and globex's 2nd request reuse the system prompt; the two tenants never share.
    const tenants = json.tenants as { requests: number; share: number }[];
    expect(tenants.map((t) => t.requests).sort()).toEqual([2, 4]);
    for (const t of tenants) expect(t.share).toBeGreaterThan(0.3);
    expect(json.sharedPrefixShare).toBeGreaterThan(0.3);
  });

  it("skips npm run dev's own lines, counts them apart from malformed, and says what to do", async () => {
    const system = Array.from({ length: 300 }, (_, i) => `Clause ${i}: be brief and exact.`).join(" ");
    const wrangler = [
      " ⛅️ wrangler 4.50.0",
      "[wrangler:inf] Ready on http://localhost:8787",
      "⎔ Reloading local server...",
    ];
    const lines = [...wrangler];
    for (let i = 0; i < 4; i++) {
      lines.push(
        await gatewayLine({
          requestId: `d${i}`,
          arrivedAt: 1_767_225_600_000 + i * 1000,
          system,
          user: `Question ${i}`,
          tenant: "acme",
        }),
      );
      lines.push(`[wrangler:inf] POST /v1/chat/completions 200 OK (${10 + i}ms)`);
    }
    const { code, json } = await analyzeJson(file("dev.txt", `${lines.join("\n")}\n`), "--backends", "2");
    expect(code).toBe(0);
    expect(json).toMatchObject({ requests: 4, malformed: 0, skippedLines: 7, formats: { gateway: 4 } });

    let out = "";
    const io: CliIO = {
      out: (s) => {
        out += s;
      },
      err: () => {},
    };
    expect(
      await analyzeCommand([file("dev2.txt", lines.join("\n")), "--search-runs", "2"], io, NOT_A_TTY),
    ).toBe(0);
    expect(out).toMatch(/; 0 malformed, /);
    expect(out).toContain("skipped 7 lines that are not JSON (first: line 1)");
    expect(out).toContain("wrangler tail --format json");

    let err = "";
    const errIo: CliIO = {
      out: () => {},
      err: (s) => {
        err += s;
      },
    };
    expect(await analyzeCommand([file("banner.txt", wrangler.join("\n"))], errIo, NOT_A_TTY)).toBe(1);
    expect(err).toContain("(0 malformed, 0 ignored, 3 lines not JSON skipped)");
    expect(err).toContain("For the gateway's lines alone: wrangler tail --format json");
  }, 60_000);

  it("says enable for multi-turn chat and skip for traffic that shares nothing", async () => {
    const chat = await analyzeJson(multiTurnLog);
    expect(chat.json.sharedPrefixShare).toBeGreaterThan(0.5);
    expect(chat.json.verdict).toBe("enable");
    const unique = await analyzeJson(noSharingLog);
    expect(unique.json.sharedPrefixShare).toBe(0);
    expect(unique.json.verdict).toBe("skip");
  }, 120_000);

  it("prints a report with the verdict and its rule", async () => {
    let out = "";
    const io: CliIO = {
      out: (s) => {
        out += s;
      },
      err: () => {},
    };
    expect(await analyzeCommand([multiTurnLog, "--search-runs", "2"], io, NOT_A_TTY)).toBe(0);
    expect(out).toMatch(/% of prompt tokens \(.*\) are in a prefix an earlier request sent/);
    expect(out).toMatch(/\| prefix_aware \| least_outstanding \|/);
    expect(out).toMatch(/Verdict: enable\n {2}- /);
    expect(out).toMatch(/Rule: enable when \(1\) at least 10%/);
    expect(out).toMatch(/system \S+ \S+ \S+ … /);
  }, 60_000);

  it("refuses bad usage with exit 2 and an unreadable or empty log with exit 1", async () => {
    const io: CliIO = { out: () => {}, err: () => {} };
    expect(await analyzeCommand([], io, NOT_A_TTY)).toBe(2);
    expect(await analyzeCommand(["a", "b"], io, NOT_A_TTY)).toBe(2);
    expect(await analyzeCommand([openaiFixture, "--backends", "0"], io, NOT_A_TTY)).toBe(2);
    expect(await analyzeCommand([join(dir, "missing.jsonl")], io, NOT_A_TTY)).toBe(1);
    expect(await analyzeCommand([file("junk.jsonl", "junk\n{}\n")], io, NOT_A_TTY)).toBe(1);
  });
});

describe("prefix-gateway analyze (spawned)", () => {
  it("has --help, and its --json output is one line with nothing on stderr off a terminal", () => {
    const help = spawnSync(node, [bin, "analyze", "--help"], { cwd: repo, encoding: "utf8" });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^usage: prefix-gateway analyze <requests.jsonl \| -> \[options\]/);
    expect(help.stdout).toMatch(/--slo-ttft-p99-ms MS/);
    const top = spawnSync(node, [bin, "--help"], { cwd: repo, encoding: "utf8" });
    expect(top.stdout).toMatch(/\n {2}analyze /);
    const r = spawnSync(node, [bin, "analyze", "-", "--json", "--backends", "2"], {
      cwd: repo,
      encoding: "utf8",
      input: tinyMooncake,
      timeout: 60_000,
    });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout.trimEnd().split("\n")).toHaveLength(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ requests: 6, malformed: 2 });
  }, 60_000);
});
