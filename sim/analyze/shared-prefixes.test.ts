import { describe, expect, it } from "vitest";
import { multiTurn } from "../workloads/multi-turn";
import { requestBlockKeys } from "../workloads/segments";
import type { WorkloadRequest } from "../workloads/types";
import { type KeyedRequest, keyedRequests, tenantFingerprint } from "./keyed-request";
import { SharedPrefixes } from "./shared-prefixes";

const MiB = 1 << 20;

async function keyed(lines: readonly object[]): Promise<KeyedRequest[]> {
  const out: KeyedRequest[] = [];
  for (const l of lines)
    for (const p of await keyedRequests(l)) {
      if (p.kind !== "request") throw new Error(JSON.stringify(p));
      out.push(p.request);
    }
  return out;
}

const mc = (t: number, input: number, ids: number[]) => ({
  timestamp: t,
  input_length: input,
  output_length: 10,
  hash_ids: ids,
});

describe("shared prefixes", () => {
  it("matches a tiny log computed by hand", async () => {
    const s = new SharedPrefixes({ tableBytes: 16 * MiB });
    const log = [
      mc(0, 1024, [1, 2]), // nothing seen: 0
      mc(1, 1300, [1, 2, 3]), // [1, 2] seen: 1024
      mc(2, 1000, [1, 4]), // [1] seen: 512
      mc(3, 100, [5]), // 0
      mc(4, 1300, [1, 2, 3]), // all seen, the partial last block too: 1300
      mc(5, 600, [1, 6]), // [1]: 512
    ];
    for (const r of await keyed(log)) s.add(r);
    const rep = s.report(10);
    expect(rep.requests).toBe(6);
    expect(rep.promptTokens).toBe(5324);
    expect(rep.sharedTokens).toBe(1024 + 512 + 1300 + 512);
    expect(rep.share).toBeCloseTo(3348 / 5324, 12);
    expect(rep.requestsWithSharedPrefix).toBe(4);
    expect(rep.lengths.map((b) => b.requests)).toEqual([2, 0, 2, 2, 0, 0, 0]);
    expect(rep.keyTable).toMatchObject({ exact: true, keys: 6 });
    // Only [1] was the longest seen prefix of two requests.
    expect(rep.top).toEqual([expect.objectContaining({ count: 2, overcount: 0, tokens: 512, tenant: "" })]);
    expect(rep.tenants).toEqual([
      { tenant: "", requests: 6, promptTokens: 5324, sharedTokens: 3348, share: 3348 / 5324 },
    ]);
  });

  it("keeps tenants apart and previews the reused text without giving it away", async () => {
    const system = `You are the billing assistant of Example Corp. ${"Answer in one short paragraph. ".repeat(30)}`;
    const chat = (t: number, tenant: string, q: string) => ({
      timestamp: t,
      model: "m",
      prompt_cache_key: tenant,
      messages: [
        { role: "system", content: system },
        { role: "user", content: q },
      ],
    });
    const s = new SharedPrefixes({ tableBytes: 16 * MiB });
    const reqs = await keyed([
      chat(0, "acme", "Why was I charged twice?"),
      chat(1, "acme", "How do I get a refund?"),
      chat(2, "acme", "Where is my invoice?"),
      chat(3, "globex", "Why was I charged twice?"),
    ]);
    for (const r of reqs) s.add(r);
    const rep = s.report(10);
    const acme = rep.tenants.find((t) => t.tenant === tenantFingerprint("acme"))!;
    const globex = rep.tenants.find((t) => t.tenant === tenantFingerprint("globex"))!;
    expect(acme.requests).toBe(3);
    expect(acme.share).toBeGreaterThan(0.5);
    expect(globex).toMatchObject({ requests: 1, sharedTokens: 0 });
    const top = rep.top[0]!;
    expect(top).toMatchObject({ count: 2, tenant: tenantFingerprint("acme") });
    expect(top.preview).toMatch(/^system You are the … /);
    expect(top.preview!.length).toBeLessThan(120);
    expect(JSON.stringify(rep)).not.toContain("acme");
  });

  it("undercounts only reuse from farther back than the key set remembers", () => {
    const w = multiTurn({ rate: 50, seed: 7, requests: 5000 });
    const asKeyed = (r: WorkloadRequest): KeyedRequest => ({
      format: "openai",
      arrivalMs: r.arrivalMs,
      promptTokens: r.promptTokens,
      tenant: "",
      keys: requestBlockKeys(r, 16),
      every: 16,
      workload: () => r,
    });
    const exact = new SharedPrefixes({ tableBytes: 64 * MiB });
    const small = new SharedPrefixes({ tableBytes: 2 * MiB });
    for (const r of w.requests) {
      exact.add(asKeyed(r));
      small.add(asKeyed(r));
    }
    const e = exact.report(5);
    const s = small.report(5);
    expect(e.keyTable.exact).toBe(true);
    expect(e.keyTable.keys).toBeGreaterThan(s.keyTable.capacity);
    expect(s.keyTable.exact).toBe(false);
    expect(s.keyTable.bytes).toBeLessThanOrEqual(2 * MiB);
    // Almost every conversation comes back within the ~80 s (98k keys) the set remembers at least.
    expect(s.share).toBeLessThanOrEqual(e.share);
    expect(e.share - s.share).toBeLessThan(0.005);
    expect(s.promptTokens).toBe(e.promptTokens);
  });
});
