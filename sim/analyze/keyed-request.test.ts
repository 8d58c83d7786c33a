import { describe, expect, it } from "vitest";
import { fingerprint } from "../../src/worker/log";
import { type KeyedRequest, keyedRequests, tenantFingerprint, tokensAt } from "./keyed-request";

async function one(o: unknown): Promise<KeyedRequest> {
  const [p, ...rest] = await keyedRequests(o);
  if (p?.kind !== "request" || rest.length > 0) throw new Error(JSON.stringify(p));
  return p.request;
}

describe("keyed requests", () => {
  it("keys a Mooncake record per hash id, the partial last block covering what is left", async () => {
    const r = await one({ timestamp: 5, input_length: 1100, output_length: 3, hash_ids: [4, 8, 15] });
    expect(r).toMatchObject({ format: "mooncake", arrivalMs: 5, promptTokens: 1100, tenant: "", every: 512 });
    expect(r.keys).toHaveLength(3);
    expect([0, 1, 2].map((j) => tokensAt(r, j))).toEqual([512, 1024, 1100]);
    expect(r.workload().outputTokens).toBe(3);
  });

  it("keys an OpenAI request per 16-token block, its tenant as the gateway fingerprints it", async () => {
    const line = {
      timestamp: "2026-01-01T00:00:01Z",
      model: "m",
      prompt_cache_key: "team-a",
      prompt: "word ".repeat(100),
      max_tokens: 9,
    };
    const r = await one(line);
    expect(r.format).toBe("openai");
    expect(r.tenant).toBe(await fingerprint("team-a"));
    expect(r.tenant).toBe(tenantFingerprint("team-a"));
    expect(r.keys).toHaveLength(Math.floor(r.promptTokens / 16));
    expect(r.prefixText!(3)).toBe("word word word");
    const w = r.workload();
    expect(w.prompt.kind === "tokens" && w.prompt.text === undefined).toBe(true);
    // Another tenant's chain shares no key with it.
    const other = await one({ ...line, prompt_cache_key: "team-b" });
    expect(Array.from(other.keys).filter((k, j) => k === r.keys[j])).toEqual([]);
  });

  it("says why a record is unusable, and ignores what is not a request", async () => {
    expect(await keyedRequests([1, 2])).toEqual([{ kind: "malformed", reason: "not a JSON object" }]);
    expect(await keyedRequests({ hello: 1 })).toMatchObject([{ kind: "malformed" }]);
    expect(await keyedRequests({ logs: [], eventTimestamp: 1 })).toEqual([{ kind: "ignored" }]);
  });
});
