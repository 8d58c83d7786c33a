import { describe, expect, it } from "vitest";
import { EngineModel } from "./engine-model";
import type { EngineConfig, EngineEvent, EngineRequest } from "./types";

/** Small engine with round numbers: 1 prefill token per ms, 10 ms + 1 ms/seq decode steps. */
const SMALL: EngineConfig = {
  kvCacheTokens: 4 * 64,
  maxModelLen: 4 * 64,
  blockTokens: 4,
  maxRunning: 8,
  prefillTokensPerSec: 1000,
  decodeStepBaseMs: 10,
  decodeStepPerSeqMs: 1,
  maxBatchedTokens: 100_000,
};

/** A request whose prompt is `promptTokens` long with full-block keys base+0, base+1, ... */
function req(id: string, promptTokens: number, outputTokens: number, base: number): EngineRequest {
  const n = Math.floor(promptTokens / 4);
  return { id, promptTokens, outputTokens, blocks: Array.from({ length: n }, (_, i) => base + i) };
}

function runAll(e: EngineModel, until = 1e9): EngineEvent[] {
  return e.advance(until);
}

function ev(events: EngineEvent[], id: string, kind: EngineEvent["kind"]): EngineEvent {
  const found = events.find((x) => x.id === id && x.kind === kind);
  if (found === undefined) throw new Error(`no ${kind} for ${id}`);
  return found;
}

/**
 * Round numbers for schedules worked by hand: blocks of 4 tokens, 1 prefill
 * token per ms, steps of 10 ms + 1 ms per decoding sequence, and a step
 * budget (max_num_batched_tokens) of 16 tokens.
 */
const HAND: EngineConfig = { ...SMALL, maxBatchedTokens: 16 };

/** A prompt of `shared` blocks keyed 0, 1, ... then `own` blocks keyed base, base+1, ..., plus `tail` loose tokens. */
function prompt(
  id: string,
  shared: number,
  own: number,
  base: number,
  tail: number,
  out: number,
): EngineRequest {
  const blocks = [
    ...Array.from({ length: shared }, (_, i) => i),
    ...Array.from({ length: own }, (_, i) => base + i),
  ];
  return { id, promptTokens: 4 * blocks.length + tail, outputTokens: out, blocks };
}

describe("EngineModel: vLLM V1 schedules worked by hand", () => {
  it("same-step reuse: two requests with one prefix, arriving together", () => {
    // A and B: the same 3 blocks (12 tokens) + 2 tokens of their own; both at t=0.
    // Step 1 @0, budget 16. Waiting A: get_computed_blocks → 0; 14 new tokens;
    //   allocate_slots → cache_blocks(A, 14): blocks 0-2 are in the cache now. Budget 2.
    // Waiting B: get_computed_blocks → blocks 0-2 (12 tokens ≤ 14 − 1) of A's;
    //   2 new tokens; budget 0.
    // The step computes 16 tokens: 10 + 16 = 26 ms. Both first tokens at 26.
    const e = new EngineModel(HAND);
    e.submit(prompt("a", 3, 0, 0, 2, 1), 0);
    e.submit(prompt("b", 3, 0, 0, 2, 1), 0);
    const out = runAll(e);
    expect(ev(out, "a", "first_token")).toMatchObject({ time: 26, cachedTokens: 0 });
    expect(ev(out, "b", "first_token")).toMatchObject({ time: 26, cachedTokens: 12 });
    expect(e.metrics(1e9).prefillSeconds).toBeCloseTo(16 / 1000, 12);
  });

  it("chunk-by-chunk: a long prompt is reusable from the step that schedules each chunk", () => {
    // A: 10 blocks (40 tokens), 2 output tokens. B: the same 10 blocks + 1 own block, at t=30.
    // Step 1 @0:  A gets 16 tokens → blocks 0-3 cached at once. 10 + 16 = 26 ms.
    // Step 2 @26: A (running, part-way) gets 16 → blocks 4-7. Budget 0: nothing else. Ends 52.
    //             B arrives at 30, during step 2, and waits for the next schedule().
    // Step 3 @52: A gets its last 8 → blocks 8-9, budget 8. Waiting B: get_computed_blocks →
    //             blocks 0-9 (40 ≤ 44 − 1 tokens), 4 new tokens. 10 + 12 = 22 ms. Ends 74:
    //             A's and B's first tokens.
    // Step 4 @74: decodes A and B: 10 + 2 = 12 ms. Ends 86: A done (2 tokens).
    const e = new EngineModel(HAND);
    const a = prompt("a", 10, 0, 0, 0, 2);
    e.submit(a, 0);
    e.advance(0);
    expect(e.cachedPrefixBlocks(a.blocks)).toBe(4); // before chunk 1 is even computed
    e.advance(26);
    expect(e.cachedPrefixBlocks(a.blocks)).toBe(8);
    e.submit(prompt("b", 10, 1, 100, 0, 2), 30);
    expect(e.metrics(30)).toMatchObject({ running: 1, waiting: 1 });
    const out = [...e.advance(52), ...runAll(e)];
    expect(e.cachedPrefixBlocks(a.blocks)).toBe(10);
    expect(ev(out, "a", "first_token")).toMatchObject({ time: 74, cachedTokens: 0 });
    expect(ev(out, "b", "first_token")).toMatchObject({ time: 74, cachedTokens: 40 });
    expect(ev(out, "a", "done").time).toBe(86);
  });

  it("token-budget admission: requests that arrive together are looked up in consecutive steps", () => {
    // Four requests, each a shared 2-block prefix (8 tokens) + 2 blocks of their own (16 tokens),
    // 10 output tokens, all at t=0.
    // Step 1 @0:  R0: hit 0, 16 new tokens; budget 0. R1-R3 wait. 10 + 16 = 26 ms.
    // Step 2 @26: R0 decodes (1 token), budget 15. R1: hit 8 (R0's blocks 0-1), 8 new,
    //             budget 7. R2: hit 8, min(8, 7) = 7 new (part-way); budget 0.
    //             10 + 1 + 15 = 26 ms. Ends 52: R1's first token.
    // Step 3 @52: R0, R1 decode (2), budget 14. R2 (running, part-way): its last 1, budget 13.
    //             R3: hit 8, 8 new; budget 5. 10 + 2 + 9 = 21 ms. Ends 73: R2's and R3's first tokens.
    const e = new EngineModel(HAND);
    for (let i = 0; i < 4; i++) e.submit(prompt(`r${i}`, 2, 2, 100 * (i + 1), 0, 10), 0);
    const out = e.advance(0);
    expect(e.metrics(0)).toMatchObject({ running: 1, waiting: 3, prefixHitTokens: 0 });
    out.push(...e.advance(26));
    expect(e.metrics(26)).toMatchObject({ running: 3, waiting: 1, prefixHitTokens: 16 });
    out.push(...e.advance(52));
    expect(e.metrics(52)).toMatchObject({ running: 4, waiting: 0, prefixHitTokens: 24 });
    out.push(...runAll(e));
    const first = (id: string) => ev(out, id, "first_token");
    expect(first("r1")).toMatchObject({ time: 52, cachedTokens: 8 });
    expect(first("r2")).toMatchObject({ time: 73, cachedTokens: 8 });
    expect(first("r3")).toMatchObject({ time: 73, cachedTokens: 8 });
  });

  it("decodes in whole steps whose time grows with the context, in closed form", () => {
    // 1 ms per token of context. A 4-token prompt, 4 output tokens.
    // Step 1 @0: prefill 4 → 10 + 4 = 14 ms: first token at 14.
    // Then decode steps with 1 sequence and context 4 + tokens so far:
    //   step 2: 10 + 1 + 5 = 16 → 30; step 3: + 6 = 17 → 47; step 4: + 7 = 18 → 65: done.
    const e = new EngineModel({ ...HAND, decodeStepPerKTokenMs: 1000 });
    e.submit(prompt("a", 1, 0, 0, 0, 4), 0);
    expect(ev(e.advance(14), "a", "first_token").time).toBe(14);
    e.advance(46.9);
    expect(e.tokensGenerated("a", 46.9)).toBe(2);
    e.advance(47);
    expect(e.tokensGenerated("a", 47)).toBe(3);
    expect(ev(runAll(e), "a", "done").time).toBe(65);
  });
});

describe("EngineModel: prefix cache", () => {
  it("serves a repeated prompt from cache, and recomputes at least the last block", () => {
    const e = new EngineModel(SMALL);
    e.submit(req("a", 40, 2, 100), 0);
    const first = runAll(e, 1000);
    expect(ev(first, "a", "first_token").cachedTokens).toBe(0);
    e.submit(req("b", 42, 2, 100), 1000); // same 10 full blocks + 2 tokens
    e.submit(req("c", 40, 2, 100), 1000); // exactly the cached prompt
    const second = runAll(e, 2000);
    expect(ev(second, "b", "first_token").cachedTokens).toBe(40);
    // vLLM caps a hit at prompt - 1 tokens: a fully cached prompt recomputes its last block.
    expect(ev(second, "c", "first_token").cachedTokens).toBe(36);
    expect(ev(second, "b", "done").cachedTokens).toBe(40);
    const m = e.metrics(2000);
    expect(m.prefixQueryTokens).toBe(40 + 42 + 40);
    expect(m.prefixHitTokens).toBe(76);
  });

  it("reuses only full blocks and only the leading run", () => {
    const e = new EngineModel(SMALL);
    e.submit(req("a", 43, 1, 100), 0); // 10 full blocks + 3 tokens
    runAll(e, 1000);
    // Shares the first 10 blocks, and its partial tail cannot be reused.
    e.submit(req("b", 47, 1, 100), 1000);
    // Block 0 differs, so nothing after it is reusable even if keys matched.
    const c = req("c", 40, 1, 100);
    e.submit({ ...c, blocks: [999, ...c.blocks.slice(1)] }, 1000);
    const out = runAll(e, 2000);
    expect(ev(out, "b", "first_token").cachedTokens).toBe(40);
    expect(ev(out, "c", "first_token").cachedTokens).toBe(0);
  });

  it("evicts least recently used prefixes, tail first, under capacity pressure", () => {
    // 64 blocks in all. A and B each leave 20 cached blocks.
    const e = new EngineModel(SMALL);
    e.submit(req("a", 80, 1, 1000), 0);
    runAll(e, 1000);
    e.submit(req("b", 80, 1, 2000), 1000);
    runAll(e, 2000);
    expect(e.cachedPrefixBlocks(req("x", 80, 1, 1000).blocks)).toBe(20);
    // KV allocated step by step (the default): A and B held 20 blocks each,
    // their prompts (the one output token is sampled, never written to KV).
    // The free queue is then the 24 never-used blocks, A's freed tail first
    // (19..0), B's (39..20). C needs 40: the 24 never-used ones, then 16 of
    // A's (older), tail first: prompt blocks 19..4. A keeps its first 4, B all 20.
    e.submit(req("c", 160, 1, 3000), 2000);
    runAll(e, 3000);
    expect(e.cachedPrefixBlocks(req("x", 80, 1, 1000).blocks)).toBe(4);
    expect(e.cachedPrefixBlocks(req("x", 80, 1, 2000).blocks)).toBe(20);
  });

  it("cachedPrefixBlocks is read-only: it does not refresh a prefix's LRU position", () => {
    const e = new EngineModel(SMALL);
    e.submit(req("a", 80, 1, 1000), 0);
    runAll(e, 1000);
    e.submit(req("b", 80, 1, 2000), 1000);
    runAll(e, 2000);
    for (let i = 0; i < 5; i++) e.cachedPrefixBlocks(req("x", 80, 1, 1000).blocks);
    e.submit(req("c", 160, 1, 3000), 2000);
    runAll(e, 3000);
    // As in the test above: A, still the older, keeps its first 4 blocks.
    expect(e.cachedPrefixBlocks(req("x", 80, 1, 1000).blocks)).toBe(4);
  });

  it("a hit refreshes the prefix: the other one is evicted instead", () => {
    const e = new EngineModel(SMALL);
    e.submit(req("a", 80, 1, 1000), 0);
    runAll(e, 1000);
    e.submit(req("b", 80, 1, 2000), 1000);
    runAll(e, 2000);
    e.submit(req("a2", 80, 1, 1000), 2000); // touches A
    runAll(e, 2500);
    e.submit(req("c", 160, 1, 3000), 3000);
    runAll(e, 4000);
    // A's recomputed last block now owns its key, so A survives whole. A2
    // took 1 new block (its last, recomputed), so 23 never-used blocks are
    // left; C takes them, A's stale copy of block 19, then B's 16 from the
    // tail: B keeps its first 4.
    expect(e.cachedPrefixBlocks(req("x", 80, 1, 1000).blocks)).toBe(20);
    expect(e.cachedPrefixBlocks(req("x", 80, 1, 2000).blocks)).toBe(4);
  });
});

describe("EngineModel: admission", () => {
  it("never holds more blocks than it has: a request that does not fit waits", () => {
    const e = new EngineModel(SMALL); // 256 tokens, 64 blocks
    // KV allocated step by step (the default): a takes its prompt's 38 blocks
    // (150 tokens, one chunk); b's whole prompt must fit to be admitted
    // (vLLM's full_sequence_must_fit): 38 more, only 26 left. a grows to 43
    // blocks as it decodes, so b waits for a to finish.
    e.submit(req("a", 150, 20, 100), 0);
    e.submit(req("b", 150, 20, 200), 0);
    e.advance(0); // the first step is scheduled
    const m = e.metrics(0);
    expect(m.running).toBe(1);
    expect(m.waiting).toBe(1);
    expect(m.kvUsage).toBeCloseTo(38 / 64);
    const out = runAll(e);
    expect(ev(out, "b", "first_token").time).toBeGreaterThanOrEqual(ev(out, "a", "done").time);
    expect(e.metrics(1e9).kvUsage).toBe(0);
    expect(() => e.submit(req("huge", 250, 10, 300), 1e9)).toThrow(RangeError);
    expect(e.fits(250, 6)).toBe(true);
    expect(e.fits(250, 7)).toBe(false);
  });

  it("caps running requests at maxRunning and admits the queue FCFS", () => {
    const e = new EngineModel({ ...SMALL, maxRunning: 2, kvCacheTokens: 4096 });
    for (let i = 0; i < 5; i++) e.submit(req(`r${i}`, 20, 5, 1000 * (i + 1)), 0);
    e.advance(0);
    expect(e.metrics(0).running).toBe(2);
    expect(e.metrics(0).waiting).toBe(3);
    const out = runAll(e);
    const firsts = out.filter((x) => x.kind === "first_token").map((x) => x.id);
    expect(firsts).toEqual(["r0", "r1", "r2", "r3", "r4"]);
    const t = (id: string): number => ev(out, id, "first_token").time;
    expect(t("r2")).toBeGreaterThanOrEqual(Math.min(ev(out, "r0", "done").time, ev(out, "r1", "done").time));
    // Events come back in time order.
    for (let i = 1; i < out.length; i++) expect(out[i]!.time).toBeGreaterThanOrEqual(out[i - 1]!.time);
  });

  it("is head-of-line FCFS: a small request does not overtake a big one that does not fit yet", () => {
    const e = new EngineModel(SMALL);
    e.submit(req("a", 150, 20, 100), 0);
    e.submit(req("big", 150, 20, 200), 1);
    e.submit(req("small", 8, 1, 300), 2); // would fit, but waits behind "big"
    const out = runAll(e);
    // Both go in once "a" frees its blocks, in one step: "small" never overtakes.
    expect(ev(out, "small", "first_token").time).toBeGreaterThanOrEqual(ev(out, "a", "done").time);
    expect(ev(out, "small", "first_token").time).toBe(ev(out, "big", "first_token").time);
  });
});

describe("EngineModel: timing", () => {
  it("TTFT grows with uncached tokens", () => {
    const ttft = (prompt: number): number => {
      const e = new EngineModel(SMALL);
      e.submit(req("a", prompt, 1, 100), 0);
      return ev(runAll(e), "a", "first_token").time;
    };
    expect(ttft(40)).toBeCloseTo(10 + 40, 6); // one step: base + 40 tokens at 1 token/ms
    expect(ttft(200)).toBeGreaterThan(ttft(40));
    // A cached prefix cuts TTFT: 160 of 200 tokens cached.
    const e = new EngineModel(SMALL);
    e.submit(req("warm", 160, 1, 100), 0);
    runAll(e, 1000);
    e.submit(req("a", 200, 1, 100), 1000);
    expect(ev(runAll(e), "a", "first_token").time - 1000).toBeCloseTo(10 + 40, 6);
  });

  it("TTFT grows with the prefill queue ahead", () => {
    const e = new EngineModel({ ...SMALL, maxBatchedTokens: 64 });
    for (let i = 0; i < 4; i++) e.submit(req(`r${i}`, 50, 1, 1000 * (i + 1)), 0);
    const out = runAll(e);
    const t = [0, 1, 2, 3].map((i) => ev(out, `r${i}`, "first_token").time);
    for (let i = 1; i < 4; i++) expect(t[i]!).toBeGreaterThan(t[i - 1]!);
  });

  it("decodes slower in a larger batch", () => {
    const tpot = (batch: number): number => {
      const e = new EngineModel(SMALL);
      for (let i = 0; i < batch; i++) e.submit(req(`r${i}`, 8, 21, 1000 * (i + 1)), 0);
      const out = runAll(e);
      return (ev(out, "r0", "done").time - ev(out, "r0", "first_token").time) / 20;
    };
    expect(tpot(1)).toBeCloseTo(11, 6); // base 10 + 1 per sequence
    // 10 + 6 per step once all six decode; more while the later ones still prefill.
    expect(tpot(6)).toBeGreaterThanOrEqual(16);
    expect(tpot(6)).toBeLessThan(20);
  });

  it("reports decode progress for streaming, and an abort frees its blocks and admits the next", () => {
    const e = new EngineModel({ ...SMALL, maxRunning: 1 });
    e.submit(req("a", 8, 100, 100), 0);
    e.submit(req("b", 8, 5, 200), 0);
    const first = e.advance(18); // a: one step of 10 + 8 ms
    expect(first.map((x) => x.kind)).toEqual(["first_token"]);
    expect(e.tokensGenerated("a", 18)).toBe(1);
    e.advance(18 + 11 * 5);
    expect(e.tokensGenerated("a", 18 + 11 * 5)).toBe(6);
    expect(e.tokensGenerated("a", 18 + 11 * 7.5)).toBe(8);
    expect(e.tokensGenerated("b", 18)).toBe(0);
    // The abort lands in the step that runs from 95 to 106; b is scheduled at its end.
    e.abort("a", 100);
    expect(e.metrics(100)).toMatchObject({ running: 0, waiting: 1 });
    e.advance(106);
    expect(e.metrics(106).running).toBe(1);
    const out = runAll(e);
    expect(out.some((x) => x.id === "a")).toBe(false);
    expect(ev(out, "b", "done").time).toBeGreaterThan(100);
    const m = e.metrics(1e9);
    expect(m.kvUsage).toBe(0);
    expect(m.requestsFinished).toBe(1);
    expect(m.generationTokensTotal).toBe(5 + 8);
  });

  it("is deterministic", () => {
    const run = (): EngineEvent[] => {
      const e = new EngineModel({ ...SMALL, maxBatchedTokens: 64 });
      const out: EngineEvent[] = [];
      let x = 3;
      for (let i = 0; i < 200; i++) {
        x = (Math.imul(x, 1103515245) + 12345) >>> 0;
        const t = i * 7;
        out.push(...e.advance(t));
        e.submit(req(`r${i}`, 8 + (x % 120), 1 + (x % 17), (x % 5) * 1000), t);
      }
      out.push(...e.advance(1e9));
      return out;
    };
    const a = run();
    expect(a.filter((x) => x.kind === "done")).toHaveLength(200);
    expect(run()).toEqual(a);
  });

  it("counts prefill GPU time from uncached tokens only", () => {
    const e = new EngineModel(SMALL);
    e.submit(req("a", 100, 1, 100), 0);
    runAll(e, 1000);
    e.submit(req("b", 100, 1, 100), 1000); // 96 cached (hit capped at prompt - 1)
    runAll(e, 2000);
    expect(e.metrics(2000).prefillSeconds).toBeCloseTo((100 + 4) / 1000, 9);
  });
});

/**
 * kvAllocation "incremental", worked by hand: blocks of 4 tokens, 1 prefill
 * token per ms, steps of 10 ms + 1 ms per decoding sequence. A request whose
 * first token came out at the end of step s computes its prompt + (n − s)
 * tokens in step n and holds ⌈that ÷ 4⌉ blocks from then on (allocate_slots).
 */
describe("EngineModel: KV allocated step by step, with preemption (vLLM V1)", () => {
  const cache = (blocks: number, kvAllocation: "reserve" | "incremental"): EngineConfig => ({
    ...SMALL,
    kvCacheTokens: 4 * blocks,
    kvAllocation,
  });

  it("admits together two requests that fit by prompt but not by prompt + output", () => {
    // 8 blocks. A and B: 8-token prompts (2 blocks), 9 output tokens, at t=0.
    // reserve: A takes ⌈17/4⌉ = 5 blocks, B's 5 do not fit the 3 left: B waits for A.
    //   A: 10 + 8 = 18 ms to its first token, 8 decode steps of 11 ms: done at 106.
    //   B is admitted at 106: first token at 106 + 18 = 124.
    // incremental: both take their 2 prompt blocks in step 1: 10 + 16 = 26 ms, both first tokens.
    //   Decode step i (1..8) computes 8 + i tokens: 3 blocks each from i = 1, 4 from i = 5: 8 = all,
    //   never more, so no preemption. 8 steps of 12 ms: both done at 122.
    const run = (mode: "reserve" | "incremental"): EngineEvent[] => {
      const e = new EngineModel(cache(8, mode));
      e.submit(req("a", 8, 9, 100), 0);
      e.submit(req("b", 8, 9, 200), 0);
      const out = runAll(e);
      expect(e.metrics(1e9).preemptions).toBe(0);
      return out;
    };
    const reserve = run("reserve");
    expect(ev(reserve, "a", "first_token").time).toBe(18);
    expect(ev(reserve, "a", "done").time).toBe(106);
    expect(ev(reserve, "b", "first_token").time).toBe(124);
    const incremental = run("incremental");
    expect(ev(incremental, "a", "first_token").time).toBe(26);
    expect(ev(incremental, "b", "first_token").time).toBe(26);
    expect(ev(incremental, "a", "done").time).toBe(122);
    expect(ev(incremental, "b", "done").time).toBe(122);
  });

  it("admits a waiting request only when its whole prompt fits, not only its first chunk", () => {
    // 12 blocks, step budget 16. A: 16-token prompt, 20 output tokens; B: 36-token prompt, 2 output.
    // Step 1 @0: A takes the whole budget: 10 + 16 = 26, A's first token.
    // Step 2 @26: A decodes (17 tokens: 5 blocks, 7 free). B's first chunk (15 tokens, 4 blocks) would
    //   fit, its 9 prompt blocks do not (scheduler_reserve_full_isl): B waits. A alone grows to
    //   ⌈35/4⌉ = 9 blocks by its last step (20): 19 steps of 11 ms, done at 235.
    // Step 21 @235: B, 16 + 16 + 4 tokens over three steps (26, 26, 14 ms): first token at 301.
    const e = new EngineModel({ ...cache(12, "incremental"), maxBatchedTokens: 16 });
    e.submit(req("a", 16, 20, 100), 0);
    e.submit(req("b", 36, 2, 200), 0);
    const out = runAll(e);
    expect(ev(out, "a", "done").time).toBe(235);
    expect(ev(out, "b", "first_token").time).toBe(301);
    expect(e.metrics(1e9).preemptions).toBe(0);
  });

  /**
   * 6 blocks. A (keys 100, 101) and B (keys 200, 201): 8-token prompts, 8 output tokens, at t=0.
   * Step 1 @0: both admitted with 2 blocks each; 10 + 16 = 26: first tokens (startStep 1).
   * Steps 2-5 (9..12 tokens): 3 blocks each, 0 free; 12 ms each: the decode run ends at 74.
   * Step 6 @74: A needs a 4th block (13 tokens), none free: the last running request, B, is
   *   preempted after 5 tokens (steps 1-5); its 3 blocks go back tail first, A takes the first
   *   (B's unkeyed output block); B's prompt blocks stay cached. No admission in this step.
   *   A alone: 11 ms, ends 85.
   * Step 7 @85: B, at the front of the queue, would recompute 8 + 5 = 13 tokens: its 2 blocks are
   *   cached (free queue), it needs 2 more, the free queue holds only those 2: it waits. Ends 96.
   * Step 8 @96: A's last token (8 at step 8): done at 107, its 4 blocks free.
   * Step 9 @107: B: hit 2 blocks, computes the other 5 tokens: 10 + 5 = 15 ms, ends 122: that
   *   step samples its 6th token (no second first_token). Steps 10, 11: 11 ms each: done at 144.
   */
  function preempting(): EngineModel {
    const e = new EngineModel(cache(6, "incremental"));
    e.submit(req("a", 8, 8, 100), 0);
    e.submit(req("b", 8, 8, 200), 0);
    return e;
  }

  it("preempts the last admitted request when a running one cannot grow, and recomputes it first", () => {
    const e = preempting();
    const out = runAll(e);
    expect(out.filter((x) => x.kind === "first_token")).toHaveLength(2);
    expect(ev(out, "a", "first_token").time).toBe(26);
    expect(ev(out, "b", "first_token").time).toBe(26);
    expect(ev(out, "a", "done").time).toBe(107);
    expect(ev(out, "b", "done")).toMatchObject({ time: 144, outputTokens: 8, cachedTokens: 0 });
    const m = e.metrics(1e9);
    expect(m.preemptions).toBe(1);
    expect(m.generationTokensTotal).toBe(16);
    expect(m.promptTokensTotal).toBe(16);
  });

  it("keeps a preempted request's blocks in the prefix cache: its recompute hits them", () => {
    const e = preempting();
    e.advance(80); // after the preemption at 74
    expect(e.tokensGenerated("b", 80)).toBe(5);
    expect(e.cachedPrefixBlocks([200, 201])).toBe(2);
    const m = e.metrics(80);
    expect(m.waiting).toBe(1);
    expect(m.running).toBe(1);
    expect(m.kvUsage).toBeCloseTo(4 / 6, 12); // A's 4 blocks; B's are free but cached
    runAll(e);
    // Step 1: 16 prompt tokens; B's recompute: 13 − 8 cached.
    expect(e.metrics(1e9).prefillSeconds).toBeCloseTo((16 + 5) / 1000, 12);
  });

  it("copyFrom: a copy taken mid-run under memory pressure steps on exactly as the original", () => {
    for (const at of [30, 74, 80, 90, 110, 130]) {
      const a = preempting();
      a.advance(at);
      const b = new EngineModel(a.config).copyFrom(a);
      expect(b.advance(1e9)).toEqual(a.advance(1e9));
      expect(b.metrics(1e9)).toEqual(a.metrics(1e9));
    }
  });

  it("is the reserve schedule when memory never runs short, decode runs included", () => {
    const run = (mode: "reserve" | "incremental"): EngineEvent[] => {
      const e = new EngineModel({
        ...SMALL,
        maxBatchedTokens: 64,
        kvCacheTokens: 4 * 100_000,
        kvAllocation: mode,
      });
      const out: EngineEvent[] = [];
      let x = 7;
      for (let i = 0; i < 300; i++) {
        x = (Math.imul(x, 1103515245) + 12345) >>> 0;
        const t = i * 9;
        out.push(...e.advance(t));
        e.submit(req(`r${i}`, 8 + (x % 120), 1 + (x % 40), (x % 5) * 1000), t);
      }
      out.push(...e.advance(1e9));
      return out;
    };
    expect(run("incremental")).toEqual(run("reserve"));
  });

  /** The first `n` of 300 requests on a 60-block cache, 9 ms apart: many preemptions. */
  function pressured(n = 300): EngineModel {
    const e = new EngineModel({
      ...SMALL,
      maxBatchedTokens: 64,
      kvCacheTokens: 4 * 60,
      kvAllocation: "incremental",
    });
    let x = 11;
    for (let i = 0; i < n; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      e.advance(i * 9);
      e.submit(req(`r${i}`, 8 + (x % 60), 1 + (x % 80), (x % 5) * 1000), i * 9);
    }
    return e;
  }
  const trueOutputs: Record<string, number> = {};
  for (let i = 0, x = 11; i < 300; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    trueOutputs[`r${i}`] = 1 + (x % 80);
  }

  it("copyFrom and reviseOutputs (true lengths) under preemption step on exactly as the original", () => {
    for (const n of [40, 100, 170, 250]) {
      const e = pressured(n);
      const at = n * 9 - 4; // inside a step or a run, not at a boundary
      e.advance(at);
      const copy = new EngineModel(e.config).copyFrom(e);
      const revised = new EngineModel(e.config).copyFrom(e).reviseOutputs((id) => trueOutputs[id]!);
      const original = e.advance(1e9);
      expect(original.length).toBeGreaterThan(0);
      expect(copy.advance(1e9)).toEqual(original);
      expect(revised.advance(1e9)).toEqual(original);
      expect(copy.metrics(1e9)).toEqual(e.metrics(1e9));
    }
    expect(pressured(100).metrics(900).preemptions).toBeGreaterThan(0);
  });

  it("under pressure: every request completes with all its tokens, and preemptions happen", () => {
    const e = new EngineModel({
      ...SMALL,
      maxBatchedTokens: 64,
      kvCacheTokens: 4 * 60,
      kvAllocation: "incremental",
    });
    const out: EngineEvent[] = [];
    let x = 11;
    for (let i = 0; i < 300; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      const t = i * 9;
      out.push(...e.advance(t));
      e.submit(req(`r${i}`, 8 + (x % 60), 1 + (x % 80), (x % 5) * 1000), t);
    }
    out.push(...e.advance(1e9));
    const m = e.metrics(1e9);
    expect(m.preemptions).toBeGreaterThan(0);
    expect(out.filter((y) => y.kind === "first_token")).toHaveLength(300);
    expect(out.filter((y) => y.kind === "done")).toHaveLength(300);
    expect(m.kvUsage).toBe(0);
    expect(m.running + m.waiting).toBe(0);
  });
});
