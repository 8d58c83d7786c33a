import { describe, expect, it } from "vitest";
import { multiTurn } from "./multi-turn";
import { noSharedPrefix } from "./no-shared-prefix";
import { requestBlockKeys, segmentTokens } from "./segments";
import { generatedSharedPrefix } from "./shared-prefix";
import type { Segment, Workload, WorkloadRequest } from "./types";
import { zipfHotPrefix } from "./zipf-hot-prefix";

function segs(r: WorkloadRequest): readonly Segment[] {
  if (r.prompt.kind !== "segments") throw new Error("expected segments");
  return r.prompt.segments;
}

function sorted(w: Workload): boolean {
  return w.requests.every((r, i) => i === 0 || r.arrivalMs >= w.requests[i - 1]!.arrivalMs);
}

describe("generated-shared-prefix", () => {
  const w = generatedSharedPrefix({ rate: 8, seed: 1 });
  it("has SGLang's defaults: 64 groups x 16 prompts, 2048 + 128 tokens, 256 out", () => {
    expect(w.requests).toHaveLength(1024);
    const groups = new Map<string, number>();
    for (const r of w.requests) {
      const [sys, q] = segs(r);
      expect(sys!.tokens).toBe(2048);
      expect(q!.tokens).toBe(128);
      expect(r.promptTokens).toBe(2176);
      expect(r.outputTokens).toBe(256);
      groups.set(sys!.key, (groups.get(sys!.key) ?? 0) + 1);
    }
    expect(groups.size).toBe(64);
    expect([...groups.values()].every((c) => c === 16)).toBe(true);
    expect(new Set(w.requests.map((r) => segs(r)[1]!.key)).size).toBe(1024);
    expect(sorted(w)).toBe(true);
  });
  it("shares exactly the system prompt's 128 blocks within a group", () => {
    const [a, b] = w.requests.filter((r) => segs(r)[0]!.key === segs(w.requests[0]!)[0]!.key);
    const ka = requestBlockKeys(a!, 16);
    const kb = requestBlockKeys(b!, 16);
    expect(ka).toHaveLength(136);
    let common = 0;
    while (ka[common] === kb[common]) common++;
    expect(common).toBe(128);
  });
  it("is deterministic for a seed and shuffled (groups interleave)", () => {
    const again = generatedSharedPrefix({ rate: 8, seed: 1 });
    expect(again.requests.map((r) => [r.arrivalMs, segs(r)[1]!.key])).toEqual(
      w.requests.map((r) => [r.arrivalMs, segs(r)[1]!.key]),
    );
    const first16 = new Set(w.requests.slice(0, 16).map((r) => segs(r)[0]!.key));
    expect(first16.size).toBeGreaterThan(8);
  });
});

describe("multi-turn", () => {
  const w = multiTurn({ rate: 4, seed: 2, requests: 500 });
  it("produces the requested count, sorted", () => {
    expect(w.requests).toHaveLength(500);
    expect(sorted(w)).toBe(true);
  });
  it("makes each turn's prompt extend the previous turn's prompt plus its answer", () => {
    const byConv = new Map<string, WorkloadRequest[]>();
    for (const r of w.requests) {
      const conv = segs(r)[1]!.key.split("/")[2]!;
      byConv.set(conv, [...(byConv.get(conv) ?? []), r]);
    }
    let checked = 0;
    for (const turns of byConv.values()) {
      for (let k = 1; k < turns.length; k++) {
        const prev = segs(turns[k - 1]!);
        const cur = segs(turns[k]!);
        expect(cur.slice(0, prev.length)).toEqual(prev);
        const answer = cur[prev.length]!;
        expect(answer.key).toMatch(/\/a\d+$/);
        expect(answer.tokens).toBe(turns[k - 1]!.outputTokens);
        expect(turns[k]!.arrivalMs).toBeGreaterThan(turns[k - 1]!.arrivalMs);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(300);
  });
  it("has a long-run request rate near the requested one", () => {
    const big = multiTurn({ rate: 4, seed: 3, requests: 4000 });
    const span = big.requests[3000]!.arrivalMs / 1000;
    expect(3000 / span).toBeGreaterThan(3);
    expect(3000 / span).toBeLessThan(5);
  });
});

describe("zipf-hot-prefix", () => {
  it("puts about half the traffic on one prefix and Zipf on the rest", () => {
    const w = zipfHotPrefix({ rate: 10, seed: 4, requests: 4000 });
    const counts = new Map<string, number>();
    for (const r of w.requests) counts.set(segs(r)[0]!.key, (counts.get(segs(r)[0]!.key) ?? 0) + 1);
    const hot = [...counts.entries()].find(([k]) => k.endsWith("/hot"))![1];
    expect(hot / 4000).toBeGreaterThan(0.47);
    expect(hot / 4000).toBeLessThan(0.53);
    const z0 = counts.get("zipf/4/p/z0") ?? 0;
    const z1 = counts.get("zipf/4/p/z1") ?? 0;
    expect(z0).toBeGreaterThan(z1);
    expect(counts.size).toBeGreaterThan(100);
  });
});

describe("no-shared-prefix", () => {
  it("shares no first block between any two prompts", () => {
    const w = noSharedPrefix({ rate: 10, seed: 5, requests: 300 });
    const first = new Set(w.requests.map((r) => requestBlockKeys(r, 16)[0]));
    expect(first.size).toBe(300);
    for (const r of w.requests) expect(r.promptTokens).toBeGreaterThanOrEqual(1024);
  });
});

describe("segmentTokens", () => {
  it("is deterministic, prefix-consistent and key-sensitive", () => {
    const a = segmentTokens({ key: "k", tokens: 100 });
    expect(segmentTokens({ key: "k", tokens: 100 })).toEqual(a);
    expect(segmentTokens({ key: "k", tokens: 40 })).toEqual(a.subarray(0, 40));
    expect(segmentTokens({ key: "j", tokens: 100 })).not.toEqual(a);
    expect(Math.max(...a)).toBeLessThan(200_000);
  });
  it("separates tenants: same text, different keys", () => {
    const base = { arrivalMs: 0, promptTokens: 32, outputTokens: 1 };
    const prompt = { kind: "segments" as const, segments: [{ key: "s", tokens: 32 }] };
    const a = requestBlockKeys({ ...base, prompt }, 16);
    const b = requestBlockKeys({ ...base, prompt, tenant: "t1" }, 16);
    expect(a).toHaveLength(2);
    expect(a[0]).not.toBe(b[0]);
  });
});
