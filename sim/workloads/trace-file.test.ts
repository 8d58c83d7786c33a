import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Tiktoken } from "js-tiktoken/lite";
import o200kBase from "js-tiktoken/ranks/o200k_base";
import { describe, expect, it } from "vitest";
import { mooncakeRequest } from "./mooncake";
import { timestampMs } from "./openai-log";
import { requestBlockKeys } from "./segments";
import { parseTrace, readTraceFile } from "./trace-file";

const mc = (o: object): string => JSON.stringify(o);

describe("Mooncake records", () => {
  it("makes one segment per hash id, the last one partial", () => {
    const r = mooncakeRequest({ timestamp: 5, input_length: 1100, output_length: 7, hash_ids: [3, 9, 11] });
    if (typeof r === "string") throw new Error(r);
    expect(r.prompt.kind === "segments" && r.prompt.segments).toEqual([
      { key: "mc/3", tokens: 512 },
      { key: "mc/9", tokens: 512 },
      { key: "mc/11", tokens: 76 },
    ]);
    expect(r.promptTokens).toBe(1100);
    expect(requestBlockKeys(r, 512)).toHaveLength(2);
  });
  it("rejects lengths that do not fit the ids", () => {
    expect(mooncakeRequest({ timestamp: 0, input_length: 2000, output_length: 1, hash_ids: [1, 2] })).toMatch(
      /does not fit/,
    );
    expect(mooncakeRequest({ timestamp: 0, input_length: 10, output_length: 1, hash_ids: [] })).toMatch(
      /hash_ids/,
    );
  });
  it("shares keys exactly as far as the hash ids agree", () => {
    const a = mooncakeRequest({ timestamp: 0, input_length: 2048, output_length: 1, hash_ids: [1, 2, 3, 4] });
    const b = mooncakeRequest({ timestamp: 0, input_length: 2048, output_length: 1, hash_ids: [1, 2, 7, 4] });
    if (typeof a === "string" || typeof b === "string") throw new Error("parse");
    const ka = requestBlockKeys(a, 512);
    const kb = requestBlockKeys(b, 512);
    expect(ka.slice(0, 2)).toEqual(kb.slice(0, 2));
    expect(ka[2]).not.toBe(kb[2]);
    expect(ka[3]).not.toBe(kb[3]);
  });
});

describe("timestamps", () => {
  it("detects ISO, epoch ms, epoch seconds and relative ms", () => {
    expect(timestampMs("2026-01-01T00:00:01Z")).toBe(Date.UTC(2026, 0, 1, 0, 0, 1));
    expect(timestampMs(1_767_225_601_000)).toBe(1_767_225_601_000);
    expect(timestampMs(1_767_225_601.5)).toBe(1_767_225_601_500);
    expect(timestampMs(2500)).toBe(2500);
    expect(timestampMs("yesterday")).toBeNull();
    expect(timestampMs(-1)).toBeNull();
  });
});

describe("parseTrace", () => {
  it("reads Mooncake lines, sorts by time, applies speed, counts malformed lines", async () => {
    const text = [
      mc({ timestamp: 2000, input_length: 600, output_length: 5, hash_ids: [0, 1] }),
      "not json",
      mc({ timestamp: 1000, input_length: 512, output_length: 3, hash_ids: [0] }),
      "[1,2]",
      mc({ foo: 1 }),
      mc({ timestamp: 3000, input_length: 99999, output_length: 3, hash_ids: [0] }),
      "",
    ].join("\n");
    const w = await parseTrace(text, { speed: 2 });
    expect(w.requests.map((r) => r.arrivalMs)).toEqual([0, 500]);
    expect(w.malformed).toBe(4);
    expect(w.malformedSamples[0]).toBe("line 2: not JSON");
    expect(w.blockTokens).toBe(512);
  });

  it("tokenizes OpenAI requests with o200k_base and seeds by model and tenant", async () => {
    const sys = { role: "system", content: "You are a helpful assistant. ".repeat(20) };
    const text = [
      mc({
        timestamp: "2026-01-01T00:00:00Z",
        model: "m",
        messages: [sys, { role: "user", content: "hi" }],
        max_tokens: 9,
      }),
      mc({
        timestamp: "2026-01-01T00:00:01.5Z",
        model: "m",
        messages: [sys, { role: "user", content: "yo" }],
      }),
      mc({ timestamp: "2026-01-01T00:00:02Z", model: "m", prompt: "plain prompt", prompt_cache_key: "t" }),
      mc({ timestamp: "2026-01-01T00:00:03Z", messages: "oops" }),
      mc({ timestamp: "2026-01-01T00:00:04Z", messages: [{ content: "no role" }] }),
      mc({ messages: [{ role: "user", content: "no time" }] }),
    ].join("\n");
    const w = await parseTrace(text);
    expect(w.malformed).toBe(3);
    expect(w.blockTokens).toBe(16);
    expect(w.requests.map((r) => r.arrivalMs)).toEqual([0, 1500, 2000]);
    const [a, b, c] = w.requests;
    expect(a!.outputTokens).toBe(9);
    expect(b!.outputTokens).toBe(256);
    // The router is told what the client sent, not the assumed length.
    expect(a!.sentMaxTokens).toBe(9);
    expect(b!.sentMaxTokens).toBeNull();
    expect(c!.tenant).toBe("t");
    expect(a!.promptTokens).toBeGreaterThan(100);
    const ka = requestBlockKeys(a!, 16);
    const kb = requestBlockKeys(b!, 16);
    // The shared system message covers several full blocks: they must match.
    expect(ka.length).toBeGreaterThan(5);
    expect(ka.slice(0, 5)).toEqual(kb.slice(0, 5));
  });

  it("tokenizes a 200,000-letter run in linear time, and ordinary text as js-tiktoken does", async () => {
    // js-tiktoken's merge is quadratic in a piece: 20,000 letters took analyze 92 s, 200,000 would take hours.
    const line = (content: string) =>
      JSON.stringify({ timestamp: 0, model: "m", messages: [{ role: "user", content }] });
    const started = performance.now();
    const w = await parseTrace(line("a".repeat(200_000)));
    expect(performance.now() - started).toBeLessThan(20_000);
    expect(w.malformed).toBe(0);
    expect(w.requests[0]!.promptTokens).toBeGreaterThan(200_000 / 16);
    // Ordinary text: the same ids as js-tiktoken (role + "\n" + content + "\n", the canonical text).
    const text = "You are a helpful assistant. Résumé: 東京 — 42 items, <b>bold</b>!";
    const enc = new Tiktoken(o200kBase);
    const [r] = (await parseTrace(line(text))).requests;
    if (r?.prompt.kind !== "tokens") throw new Error("expected token ids");
    expect(Array.from(r.prompt.tokens)).toEqual(enc.encode(`user\n${text}\n`));
  }, 30_000);

  it("never throws on garbage", async () => {
    const w = await parseTrace("\u0000\n{\n}\nnull\n42\n");
    expect(w.requests).toHaveLength(0);
    expect(w.malformed).toBe(5);
  });
});

describe("readTraceFile", () => {
  const dir = mkdtempSync(join(tmpdir(), "pg-trace-file-"));
  const write = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const req = (t: number, ids: number[]) =>
    mc({ timestamp: t, input_length: ids.length * 512 - 12, output_length: 3, hash_ids: ids });

  it("makes the workload parseTrace makes of the file's text, whatever the reads' size", async () => {
    // Multi-byte characters, CRLF, blank and malformed lines, and no newline at the end: read 7 bytes at a
    // time, lines and characters fall across reads.
    const text = [
      req(30, [1, 2]),
      "",
      "pas du JSON — Résumé 東京",
      `${req(10, [1, 3])}\r`,
      JSON.stringify({
        timestamp: 20,
        model: "m",
        messages: [{ role: "user", content: "Grüße aus 東京 ✓" }],
      }),
      "{broken",
      req(40, [1, 2, 4]),
    ].join("\n");
    const path = write("mixed.jsonl", text);
    try {
      const whole = await parseTrace(text, { name: path, speed: 2 });
      expect(whole.requests).toHaveLength(4);
      expect(whole.malformedSamples).toEqual(["line 3: not JSON", "line 6: not JSON"]);
      for (const chunkBytes of [7, 64, 1 << 20])
        expect(await readTraceFile(path, { speed: 2, chunkBytes })).toEqual(whole);
    } finally {
      rmSync(path);
    }
  });

  it("with maxRequests, keeps the first N requests in file order and reads no further", async () => {
    // Twelve requests, newest first, then malformed lines that a whole read would count.
    const lines = Array.from({ length: 12 }, (_, i) => req(1_000 - i * 10, [1, 100 + i]));
    const path = write(
      "window.jsonl",
      [lines[0], "oops", ...lines.slice(1), "bad 1", "bad 2", ""].join("\n"),
    );
    try {
      const progress: [number, number, number][] = [];
      const w = await readTraceFile(path, {
        maxRequests: 5,
        chunkBytes: 64,
        onProgress: (...p) => progress.push(p),
      });
      // The first five in the file (timestamps 1000…960), sorted by arrival and rebased to the earliest.
      expect(w.requests.map((r) => r.arrivalMs)).toEqual([0, 10, 20, 30, 40]);
      expect(w.malformed).toBe(1);
      expect(w.window).toMatchObject({ lines: 6 });
      expect(w.window!.bytesRead).toBeLessThan(w.window!.bytes);
      expect(progress.length).toBeGreaterThan(0);
      expect(progress.every(([read, bytes]) => read <= bytes)).toBe(true);
      // A window larger than the file is the whole file, and says no window.
      const all = await readTraceFile(path, { maxRequests: 13 });
      expect(all.requests).toHaveLength(12);
      expect(all.malformed).toBe(3);
      expect(all.window).toBeUndefined();
      expect(await readTraceFile(path, {})).toEqual(all);
      // Full at the last request: the lines after it are not read (their malformed lines go uncounted)…
      expect(await readTraceFile(path, { maxRequests: 12 })).toMatchObject({
        malformed: 1,
        window: { lines: 13 },
      });
      // …and when only blank lines follow, nothing was left out.
      const exact = write("exact.jsonl", `${lines.slice(0, 3).join("\n")}\n\n  \n`);
      expect((await readTraceFile(exact, { maxRequests: 3, chunkBytes: 16 })).window).toBeUndefined();
      await expect(readTraceFile(path, { maxRequests: 0 })).rejects.toThrow(/maxRequests/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
