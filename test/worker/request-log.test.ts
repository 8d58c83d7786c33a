/**
 * The request log line, as the real Worker writes it, carries what
 * `prefix-gateway analyze` reads (sim/workloads/gateway-log.ts, whose tests
 * build their tail events with the same logger and prefixLogFields): the
 * arrival time, the digest of the prompt's block-key chain, max_tokens and
 * the tenant's fingerprint; never the prompt or the tenant key.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { digestStrideBlocks, readChainDigest } from "../../src/prefix/chain-digest";
import { prefixKeysForRequest } from "../../src/prefix/request-keys";
import { SETTINGS } from "../../src/routing/defaults";
import { fingerprint, prefixLogFields } from "../../src/worker/log";
import { authHeaders, chatBody, gatewayWithEnv, longPrompt, MODEL } from "./helpers";

const PREFIX_TOKENS = SETTINGS.PREFIX_TOKENS.default;

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the request log line", () => {
  it("carries arrivedAt, the prefix digest, maxTokens and the tenant fingerprint, and no text", async () => {
    const spy = vi.spyOn(console, "log");
    const system = longPrompt("request-log", 300);
    const tenant = `tenant-${crypto.randomUUID()}`;
    const body = chatBody(system, "What does the log say?", { max_tokens: 7 });
    const before = Date.now();
    const res = await gatewayWithEnv({}, "/v1/chat/completions", {
      method: "POST",
      headers: authHeaders({ "x-prefix-cache-key": tenant }),
      body,
    });
    expect(res.status).toBe(200);
    const lines = spy.mock.calls.map((a) => String(a[0])).filter((l) => l.startsWith('{"msg":"request"'));
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;

    const keys = prefixKeysForRequest("chat", JSON.parse(body), {
      model: MODEL,
      tenant,
      blockTokens: 16,
      prefixTokens: PREFIX_TOKENS,
    });
    const expected = prefixLogFields(keys.blocks, 16, PREFIX_TOKENS, 7);
    // At most 128 digest keys: one per 256 tokens at the default PREFIX_TOKENS of 32768.
    const every = digestStrideBlocks(16, PREFIX_TOKENS) * 16;
    expect(line).toMatchObject({ ...expected, prefixEvery: every, tenant: await fingerprint(tenant) });
    expect(line.arrivedAt).toBeGreaterThanOrEqual(before);
    expect(line.arrivedAt).toBeLessThanOrEqual(Date.now());
    const digest = readChainDigest(line);
    if (typeof digest === "string") throw new Error(digest);
    expect(digest.keys).toHaveLength(Math.floor(keys.keyed.tokens / every));
    expect(lines[0]).not.toContain("request-log-w");
    expect(lines[0]).not.toContain(tenant);
  });

  it("stores a 9,000-character path cut, as the 404 quotes it", async () => {
    const spy = vi.spyOn(console, "log");
    const path = `/v1/models/${"a".repeat(8989)}`;
    expect(path).toHaveLength(9000);
    const res = await gatewayWithEnv({}, path, { headers: authHeaders() });
    expect(res.status).toBe(404);
    const lines = spy.mock.calls.map((a) => String(a[0])).filter((l) => l.startsWith('{"msg":"request"'));
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!) as { path: string };
    expect(line.path).toBe(`${path.slice(0, 256)}… (9000 characters)`);
    expect(lines[0]!.length).toBeLessThan(1000);
  });
});
