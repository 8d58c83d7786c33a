import { describe, expect, it } from "vitest";
import { blockKeysFromTokens, chainSeed } from "../prefix/block-keys";
import { fingerprint, prefixLogFields, RequestLog } from "./log";

describe("RequestLog", () => {
  it("writes one JSON line, once, with the duration from its start", () => {
    const lines: string[] = [];
    const log = new RequestLog("r1", "POST", "/v1/chat/completions", 100, (l) => lines.push(l));
    log.set({ model: "m", status: 200 });
    log.emit(130, { ttftMs: 12 });
    log.emit(500, { status: 500 });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toEqual({
      msg: "request",
      requestId: "r1",
      method: "POST",
      path: "/v1/chat/completions",
      arrivedAt: 100,
      model: "m",
      status: 200,
      ttftMs: 12,
      durationMs: 30,
    });
  });

  it("stores a client's long path, method and an error's message cut, as error messages quote a client", () => {
    const lines: string[] = [];
    const path = `/v1/${"a".repeat(8996)}`;
    const log = new RequestLog("r4", "M".repeat(300), path, 0, (l) => lines.push(l));
    log.set({ error: `TypeError: ${"e".repeat(5000)}` });
    log.emit(1, { status: 404 });
    const line = JSON.parse(lines[0]!) as { path: string; method: string; error: string };
    expect(path).toHaveLength(9000);
    expect(line.path).toBe(`${path.slice(0, 256)}… (9000 characters)`);
    expect(line.method).toBe(`${"M".repeat(256)}… (300 characters)`);
    expect(line.error).toBe(`TypeError: ${"e".repeat(245)}… (5011 characters)`);
    expect(lines[0]!.length).toBeLessThan(1200);
  });

  it("takes declared fields only, conditional spreads too (checked by npm run typecheck)", () => {
    const lines: string[] = [];
    const log = new RequestLog("r3", "POST", "/v1/chat/completions", 0, (l) => lines.push(l));
    const sawError = lines.length === 0;
    // A conditional spread escapes the excess-property check; DeclaredLogFields catches it.
    // @ts-expect-error notAField is no RequestLogFields field
    log.set({ model: "m", ...(sawError ? { notAField: 1 } : {}) });
    log.emit(5, { status: 200, ...(sawError ? { backendError: true as const } : {}) });
    expect(JSON.parse(lines[0] ?? "{}")).toMatchObject({ status: 200, backendError: true, notAField: 1 });
  });

  it("can be deferred to the end of a relayed stream", () => {
    const log = new RequestLog("r2", "POST", "/v1/completions", 0, () => {});
    expect(log.isDeferred).toBe(false);
    log.defer();
    expect(log.isDeferred).toBe(true);
  });

  it("fingerprints identifiers as 8 hex digits, never the value", async () => {
    const fp = await fingerprint("sk-secret-key");
    expect(fp).toMatch(/^[0-9a-f]{8}$/);
    expect(await fingerprint("sk-secret-key")).toBe(fp);
    expect(await fingerprint("sk-other-key")).not.toBe(fp);
  });

  it("spends about 1.1 KB of a line on what analyze needs, for an 8k-token prompt", () => {
    const tokens = Uint32Array.from({ length: 8192 }, (_, i) => (i * 2654435761) % 200_000);
    const blocks = blockKeysFromTokens(tokens, chainSeed("llama-3.1-8b-instruct", "t"), 16, 8192);
    const lines: string[] = [];
    const log = new RequestLog(
      "6f1d0c6e-3b9f-4f43-9d2e-6a3f7b2c1d00",
      "POST",
      "/v1/chat/completions",
      1_767_225_600_123,
      (l) => lines.push(l),
    );
    log.set({ model: "llama-3.1-8b-instruct", stream: true, key: "1a2b3c4d", tenant: "5e6f7a8b" });
    log.set({ promptTokens: 8192, keyedTokens: 8192, ...prefixLogFields(blocks, 16, 8192, 512) });
    log.set({ backend: "gpu-07", policy: "prefix_aware", reason: "affinity", cachedTokensExpected: 7936 });
    log.set({ inflightAtDecision: 3 });
    log.emit(1_767_225_601_456, { status: 200, cachedTokensReported: 7936, ttftMs: 41 });
    const line = lines[0]!;
    const { arrivedAt, prefixKeys, prefixEvery, maxTokens, ...without } = JSON.parse(line);
    expect([arrivedAt, prefixEvery, maxTokens, prefixKeys.length]).toEqual([
      1_767_225_600_123, 64, 512, 1024,
    ]);
    const added = line.length - JSON.stringify(without).length;
    // 1,099 bytes added, 1,520 in all (bench/results/analyze.md): far below Logpush's 16,384 characters.
    expect(added).toBe(1099);
    expect(line.length).toBeLessThan(2000);
  });
});
