import { describe, expect, it } from "vitest";
import { clientMaxTokens, hintStats, MAX_TOKENS_MODELS, roundCap } from "./client-max-tokens";
import { viewOf } from "./policies";
import { prepareWorkload } from "./prepare";
import { routeRequest } from "./request-view";
import { segmentRequest } from "./workloads/request";
import type { WorkloadRequest } from "./workloads/types";

const requests: WorkloadRequest[] = Array.from({ length: 4000 }, (_, i) =>
  segmentRequest(i, [{ key: `p${i}`, tokens: 40 }], 1 + ((i * 37) % 3000)),
);
const { clients, capped, tight, absent, exact } = MAX_TOKENS_MODELS;

describe("max_tokens as clients send it", () => {
  it("rounds up to 256 · 2^k", () => {
    expect([1, 256, 257, 1000, 2000, 2049].map(roundCap)).toEqual([256, 256, 512, 1024, 2048, 4096]);
  });

  it("clients: absent on about half the requests, otherwise a round cap 0–3 rungs above the true length", () => {
    const sent = clientMaxTokens(requests, clients, 1);
    const absentShare = sent.filter((m) => m === undefined).length / sent.length;
    expect(absentShare).toBeGreaterThan(0.47);
    expect(absentShare).toBeLessThan(0.53);
    const raises = new Set<number>();
    sent.forEach((m, i) => {
      if (m === undefined) return;
      const floor = roundCap(requests[i]!.outputTokens);
      expect(m).toBeGreaterThanOrEqual(requests[i]!.outputTokens);
      raises.add(Math.log2(m / floor));
    });
    expect([...raises].sort()).toEqual([0, 1, 2, 3]);
  });

  it("is a pure function of the seed, and models on one seed differ only where their rules do", () => {
    expect(clientMaxTokens(requests, clients, 7)).toEqual(clientMaxTokens(requests, clients, 7));
    expect(clientMaxTokens(requests, clients, 7)).not.toEqual(clientMaxTokens(requests, clients, 8));
    const a = clientMaxTokens(requests, clients, 3);
    const b = clientMaxTokens(requests, capped, 3);
    a.forEach((m, i) => {
      if (m !== undefined) expect(b[i]).toBe(m);
    });
    expect(b.every((m) => m !== undefined)).toBe(true);
    expect(clientMaxTokens(requests, tight, 3)).toEqual(requests.map((r) => roundCap(r.outputTokens)));
    expect(clientMaxTokens(requests, absent, 3).every((m) => m === undefined)).toBe(true);
    expect(clientMaxTokens(requests, exact, 3)).toEqual(requests.map((r) => r.outputTokens));
  });

  it("keeps what a logged client sent, none included", () => {
    const logged: WorkloadRequest[] = [
      { ...requests[0]!, sentMaxTokens: 777 },
      { ...requests[1]!, sentMaxTokens: null },
    ];
    expect(clientMaxTokens(logged, capped, 1)).toEqual([777, undefined]);
    expect(clientMaxTokens(logged, exact, 1)).toEqual([logged[0]!.outputTokens, logged[1]!.outputTokens]);
  });

  it("summarises the hints", () => {
    const r = requests.slice(0, 2);
    expect(hintStats(r, [undefined, r[1]!.outputTokens * 3])).toEqual({
      sentShare: 0.5,
      sentOverTrue: 3,
    });
  });
});

describe("the output hint each router is given", () => {
  const w = prepareWorkload(
    { name: "t", blockTokens: 16, malformed: 0, requests: requests.slice(0, 200) },
    { maxTokens: "capped", seed: 2 },
  );

  it("tells our policies the client's max_tokens, never the true length, and the peers nothing", () => {
    let differs = 0;
    for (let i = 0; i < 200; i++) {
      const ours = routeRequest(w, i, viewOf("prefix_aware"));
      expect(ours.outputTokens).toBe(w.maxTokens[i]);
      if (ours.outputTokens !== w.requests[i]!.outputTokens) differs++;
      for (const peer of ["sglang", "llmd", "dynamo", "sagemaker"] as const)
        expect("outputTokens" in routeRequest(w, i, viewOf(peer))).toBe(false);
    }
    expect(differs).toBeGreaterThan(190);
  });

  it("leaves the hint out when the client sent none", () => {
    const none = prepareWorkload(
      { name: "t", blockTokens: 16, malformed: 0, requests },
      { maxTokens: "absent" },
    );
    expect("outputTokens" in routeRequest(none, 0, viewOf("prefix_aware"))).toBe(false);
  });
});
