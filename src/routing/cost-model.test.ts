import { describe, expect, it } from "vitest";
import { PrefillCostModel } from "./cost-model";
import type { BackendSpec } from "./types";

const FLEET: BackendSpec[] = [
  { id: "a", weight: 1, kvCacheTokens: 100_000 },
  { id: "b", weight: 1, kvCacheTokens: 100_000 },
];

function model(): PrefillCostModel {
  const m = new PrefillCostModel({ defaultPrefillTokensPerSec: 10_000, kvWeight: 0, decodeMsPerInflight: 0 });
  m.setBackends(FLEET);
  return m;
}

describe("PrefillCostModel", () => {
  it("a prefill whose first token has not come back holds the queue past its predicted end by the learned overrun", () => {
    const m = model();
    // A first token 30 ms after its predicted end (100 ms): the pool learns an overrun of 30 ms.
    const heard = m.routed(1, 1_000, 0, 0, 0);
    m.firstToken(1, heard, 130);
    m.released(1, heard, 200);
    expect(m.prefillEndOverrunMs()).toBeCloseTo(30, 9);
    // On a, a prefill predicted to end at 1100 has not answered at 1110: the ledger says the queue is clear,
    // the unanswered wait that it runs until about 1130.
    const pending = m.routed(0, 1_000, 0, 0, 1000);
    expect(m.queueWaitMs(0, 1110)).toBe(0);
    expect(m.unansweredQueueWaitMs(0, 1110)).toBeCloseTo(20, 9);
    expect(m.costTerms(0, 0, 0, 1110, 0, 0, 0, true).queueWaitMs).toBeCloseTo(20, 9);
    expect(m.costTerms(0, 0, 0, 1110, 0, 0, 0, false).queueWaitMs).toBe(0);
    // Its first token came: the queue is the ledger's again.
    m.firstToken(0, pending, 1120);
    expect(m.unansweredQueueWaitMs(0, 1120)).toBe(0);
  });

  it("learns the overrun only from a prefill the ledger expected to start at once", () => {
    const m = model();
    // One queued behind another is not expected to start at once: its lateness is the queue's.
    const ahead = m.routed(0, 1_000, 0, 0, 0);
    const behind = m.routed(0, 1_000, 0, 1, 0);
    expect(ahead.atOnce).toBe(true);
    expect(behind.atOnce).toBe(false);
    m.firstToken(0, behind, 900);
    expect(m.prefillEndOverrunMs()).toBeUndefined();
    m.firstToken(0, ahead, 130);
    expect(m.prefillEndOverrunMs()).toBeCloseTo(30, 9);
    // Heard twice, learned once.
    m.firstToken(0, ahead, 500);
    expect(m.prefillEndOverrunMs()).toBeCloseTo(30, 9);
  });

  it("never hears a first token: the unanswered wait is the ledger's", () => {
    const m = model();
    m.routed(0, 1_000, 0, 0, 0);
    expect(m.prefillEndOverrunMs()).toBeUndefined();
    expect(m.unansweredQueueWaitMs(0, 50)).toBeCloseTo(50, 9);
    expect(m.unansweredQueueWaitMs(0, 110)).toBe(0);
  });

  it("queues prefill and gives back the unfinished part of a slot when its request completes", () => {
    const m = model();
    const first = m.routed(0, 10_000, 0, 0, 0); // 1000 ms at 10 tok/ms
    m.routed(0, 5_000, 0, 1, 0); // behind it: busy until 1500
    expect(m.queueWaitMs(0, 0)).toBe(1500);
    // The first request finished at 200 ms: 800 ms of its slot were never needed.
    m.released(0, first, 200);
    expect(m.queueWaitMs(0, 200)).toBeCloseTo(500, 9);
  });

  it("a completion after the slot drained changes nothing", () => {
    const m = model();
    const slot = m.routed(0, 1_000, 0, 0, 0); // until 100
    m.routed(0, 1_000, 0, 1, 50); // until 200
    m.released(0, slot, 150);
    expect(m.queueWaitMs(0, 150)).toBeCloseTo(50, 9);
  });

  it("learns the rate both ways from requests that had the backend alone, only upwards from others", () => {
    const m = model();
    // Alone, 2,000 tok/s observed: the estimate moves down.
    for (let k = 0; k < 40; k++) {
      const s = m.routed(0, 2_000, 0, 0, k * 10_000);
      m.released(0, s, k * 10_000 + 1000);
      m.observe(0, s, 2_000, 1000);
    }
    expect(m.prefillTokensPerSec(0)).toBeLessThan(2_500);
    // Busy (others in flight), slow TTFTs: queueing, not speed — ignored.
    const before = m.prefillTokensPerSec(1);
    for (let k = 0; k < 40; k++) {
      const s = m.routed(1, 5_000, 0, 3, k * 10_000);
      m.observe(1, s, 5_000, 5_000);
    }
    expect(m.prefillTokensPerSec(1)).toBe(before);
    // Busy but faster than believed: a lower bound above the estimate raises it.
    for (let k = 0; k < 40; k++) {
      const s = m.routed(1, 20_000, 0, 3, 1e6 + k * 10_000);
      m.observe(1, s, 20_000, 1000);
    }
    expect(m.prefillTokensPerSec(1)).toBeGreaterThan(18_000);
  });

  it("keeps one pooled rate per unit of weight: a slow first sample on one backend does not single it out", () => {
    const m = new PrefillCostModel({ defaultPrefillTokensPerSec: 10_000 });
    m.setBackends([
      { id: "a", weight: 1, kvCacheTokens: 1 },
      { id: "b", weight: 3, kvCacheTokens: 1 },
    ]);
    const s = m.routed(0, 4_000, 0, 0, 0);
    m.observe(0, s, 4_000, 4_000); // alone, 1,000 tok/s (a cold connection, say)
    const a = m.prefillTokensPerSec(0);
    const b = m.prefillTokensPerSec(1);
    expect(a).toBeLessThan(5_000);
    expect(b).toBeCloseTo(3 * a, 6);
  });

  it("charges a memory wait only past the backend's KV capacity, once it knows a residence time", () => {
    const m = model();
    const s = m.routed(0, 60_000, 20_000, 0, 0);
    m.released(0, s, 4_000); // residence 4 s, no TTFT seen: the decode time is taken as the residence
    m.routed(0, 60_000, 0, 0, 10_000, 20_000); // 80k of 100k KV held (20k cached past the window); prefill ends at 16,000
    const fits = m.cost(0, 10_000, 1, 10_000, 0) - m.cost(1, 10_000, 0, 10_000, 0);
    const overflows = m.cost(0, 30_000, 1, 10_000, 10_000) - m.cost(1, 30_000, 0, 10_000, 10_000);
    const queue = m.queueWaitMs(0, 10_000);
    expect(queue).toBeCloseTo(6_000, 6);
    expect(fits).toBeCloseTo(queue, 6);
    // 80k + 40k − 100k = 20k over: only the request in flight frees it, expected at 16,000 + 4,000.
    expect(overflows).toBeCloseTo(10_000, 6);
  });

  it("waits for memory until the requests expected to finish first have freed the overflow, not a smooth drain", () => {
    const m = model();
    // Decode time learned from one completion: first token at 1 s, done at 3 s → 2 s of decode.
    const warm = m.routed(0, 1_000, 0, 0, 0);
    m.released(0, warm, 3_000, 1_000);
    // A long prompt holding 90k of the 100k, then a short one (5k) behind it.
    const now = 10_000;
    const long = m.routed(0, 80_000, 10_000, 0, now); // prefill 8 s: ends at 18,000, done ~20,000
    const short = m.routed(0, 4_000, 1_000, 1, now); // prefill ends at 18,400, done ~20,400
    expect(long.end).toBeCloseTo(18_000, 6);
    expect(short.end).toBeCloseTo(18_400, 6);
    // Needs 20k: 15k over. The long one frees enough (90k) and is expected first, at 20,000.
    const cost = m.cost(0, 10_000, 2, now, 10_000);
    const prefill = 10_000 / 10;
    expect(cost - prefill).toBeCloseTo(10_000, 6);
    // A smooth drain would have charged 15k / 95k of the 3 s residence: under half a second.
    // Once the long one completes, nothing is over capacity: no memory wait, only the queue.
    m.released(0, long, 12_000, 11_500);
    expect(m.cost(0, 10_000, 1, 12_000, 10_000) - prefill).toBeCloseTo(m.queueWaitMs(0, 12_000), 6);
  });

  it("takes a request past its prefill as decoding: one mean decode from now, never 'about to free'", () => {
    const m = model();
    const warm = m.routed(0, 1_000, 0, 0, 0);
    m.released(0, warm, 3_000, 1_000); // 2 s of decode
    const long = m.routed(0, 80_000, 10_000, 0, 10_000); // expected done at 20,000
    const later = 25_000; // still in flight 5 s after that (and 7 s past its predicted prefill end)
    expect(m.queueWaitMs(0, later)).toBe(0);
    const wait = m.cost(0, 20_000, 1, later, 0) - 20_000 / 10;
    expect(wait).toBeCloseTo(2_000, 6);
    m.released(0, long, later, 9_000);
  });

  it("orders the requests that free memory by expected end: decoding ones before the overdue, queued ones after", () => {
    const m = model();
    const warm = m.routed(0, 1_000, 0, 0, 0);
    m.released(0, warm, 4_000, 1_000); // 3 s of decode
    const old = m.routed(0, 30_000, 0, 0, 10_000); // prefill ends 13,000: overdue from 16,000
    const recent = m.routed(0, 30_000, 0, 1, 10_000); // prefill ends 16,000: expected at 19,000
    const queued = m.routed(0, 20_000, 0, 2, 10_000); // prefill ends 18,000: expected at 21,000
    expect([old.end, recent.end, queued.end]).toEqual([13_000, 16_000, 18_000]);
    const now = 16_500; // old: overdue, one more decode (19,500); recent: decoding (19,000)
    expect(m.queueWaitMs(0, now)).toBeCloseTo(1_500, 6);
    const wait = (need: number) => m.cost(0, need, 3, now, 0) - need / 10;
    expect(wait(30_000)).toBeCloseTo(2_500, 6); // 10k over: the decoding one frees it first
    expect(wait(60_000)).toBeCloseTo(3_000, 6); // 40k over: then the overdue one
    expect(wait(90_000)).toBeCloseTo(4_500, 6); // 70k over: all three, the queued one last
    // Released out of order, each leaves the ledger.
    m.released(0, recent, now, 4_000);
    m.released(0, old, now, 4_000);
    m.released(0, queued, now, 4_000);
    expect(m.heldTokens(0)).toBe(0);
    expect(wait(30_000)).toBeCloseTo(0, 6);
  });

  it("counts an in-flight request's output as decoded so far, as vLLM V1 allocates it, not all of it from admission", () => {
    const m = model();
    const warm = m.routed(0, 1_000, 0, 0, 0);
    m.released(0, warm, 3_000, 1_000); // 2 s of decode
    const slot = m.routed(0, 50_000, 40_000, 0, 10_000); // prefill until 15,000, expected done at 17,000
    expect(slot.kvTokens).toBe(90_000);
    expect(m.heldTokens(0)).toBe(90_000); // the work bound and the KV term still count the whole
    const memoryWait = (need: number, now: number) => m.costTerms(0, need, 1, now, 0, 0).memoryWaitMs;
    // Before its first token it holds its prompt only: 50k + 45k fits the 100k (a whole-output ledger: 5 s).
    expect(memoryWait(45_000, 10_000)).toBe(0);
    // Halfway through its decode it holds 50k + 20k: 20k fits, 40k is 10k over until it completes at 17,000.
    expect(memoryWait(20_000, 16_000)).toBe(0);
    expect(memoryWait(40_000, 16_000)).toBeCloseTo(1_000, 6);
    // Past its expected end it holds its whole output.
    expect(memoryWait(20_000, 17_500)).toBeCloseTo(2_000, 6);
  });

  it("counts the cached history our requests pin as held memory: the index's pinned entries less the keyed blocks they added", () => {
    const m = model();
    const warm = m.routed(0, 1_000, 0, 0, 0);
    m.released(0, warm, 3_000, 1_000); // 2 s of decode
    // 10k new keyed tokens on top of 50k of cached history it matched: prefill until 11,000, done at 13,000.
    m.routed(0, 10_000, 0, 0, 10_000, 0, 10_000, 50_000);
    // Without the index's count the ledger sees its 10k input only: 45k more fits the 100k.
    expect(m.memoryWaitForMs(0, 45_000, 10_000)).toBe(0);
    // The index pins 60k (the 50k history and the 10k it added): 10k + 50k + 45k is 5k over until it ends.
    expect(m.memoryWaitForMs(0, 45_000, 10_000, 60_000)).toBeCloseTo(3_000, 6);
    // A history shared with a request that ended is pinned once: the index's count, not the slots', decides.
    expect(m.memoryWaitForMs(0, 45_000, 10_000, 40_000)).toBe(0);
  });

  it("counts an answer at the mean the engines reported, never more than its max_tokens hint", () => {
    const m = model();
    const warm = m.routed(0, 1_000, 0, 0, 0);
    m.released(0, warm, 3_000, 1_000); // 2 s of decode
    m.observeOutput(1_000);
    expect(m.expectedAnswer(40_000)).toBe(1_000);
    expect(m.expectedAnswer(0)).toBe(1_000); // no hint: the mean
    expect(m.expectedAnswer(500)).toBe(500); // the hint bounds it
    // 50k of input with a 40k hint, past its expected end: it holds 50k + 1k, not 50k + 40k.
    const slot = m.routed(0, 50_000, 40_000, 0, 10_000);
    expect(slot.answerTokens).toBe(1_000);
    expect(m.heldTokens(0)).toBe(90_000); // the work bound and the KV term still count the hint
    expect(m.memoryWaitForMs(0, 40_000, 17_500)).toBe(0);
  });

  it("counts the later of queue and memory waits, not their sum: memory is freed while the queue drains", () => {
    const m = model();
    const warm = m.routed(0, 1_000, 0, 0, 0);
    m.released(0, warm, 3_000, 1_000); // 2 s of decode
    m.routed(0, 50_000, 0, 0, 10_000, 40_000); // 40k past the window: prefill until 15,000, expected done at 17,000
    const queue = m.queueWaitMs(0, 10_000);
    expect(queue).toBeCloseTo(5_000, 6);
    // 90k held + 20k needed: 10k over, freed at 17,000 → 7 s, which already covers the 5 s queue.
    expect(m.cost(0, 10_000, 1, 10_000, 10_000) - 10_000 / 10).toBeCloseTo(7_000, 6);
  });

  it("scales a backend's assumed rate by its weight until measured", () => {
    const m = new PrefillCostModel({ defaultPrefillTokensPerSec: 10_000 });
    m.setBackends([
      { id: "a", weight: 1, kvCacheTokens: 1 },
      { id: "b", weight: 3, kvCacheTokens: 1 },
    ]);
    expect(m.prefillTokensPerSec(0)).toBe(5_000);
    expect(m.prefillTokensPerSec(1)).toBe(15_000);
  });
});

describe("PrefillCostModel's in-flight cost", () => {
  const fleet: BackendSpec[] = [
    { id: "a", weight: 1, kvCacheTokens: 1_000_000 },
    { id: "b", weight: 3, kvCacheTokens: 1_000_000 },
  ];

  /**
   * Backend 0 serves `rounds` rounds of k = 1..8 requests sent together and finishing together, on an engine
   * whose step takes 7 + 0.15 ms per running request: each decodes 100 tokens after a 10 ms first token.
   */
  function serve(m: PrefillCostModel, rounds: number, t0 = 0): number {
    let now = t0;
    for (let r = 0; r < rounds; r++) {
      for (let k = 1; k <= 8; k++) {
        const slots = Array.from({ length: k }, (_, j) => m.routed(0, 100, 100, j, now));
        const decode = 99 * (7 + 0.15 * k);
        now += 10 + decode;
        for (const s of slots) m.released(0, s, now, 10, 100);
        now += 1_000;
      }
    }
    return now;
  }

  it("has no learned figure before enough completions; charges the constant per request, scaled by weight", () => {
    const m = new PrefillCostModel({ kvWeight: 0 });
    m.setBackends(fleet);
    expect(m.learnedInflightMs(0)).toBeUndefined();
    expect(m.cost(0, 0, 10, 0) - m.cost(0, 0, 0, 0)).toBeCloseTo(40, 9); // 2 ms ÷ share 0.5, × 10
    expect(m.cost(1, 0, 10, 0) - m.cost(1, 0, 0, 0)).toBeCloseTo(20 / 1.5, 9);
  });

  it("learns from completions what a request in flight adds to a step, pooled per unit of weight", () => {
    const m = new PrefillCostModel({ kvWeight: 0 });
    m.setBackends(fleet);
    const now = serve(m, 5);
    expect(m.learnedInflightMs(0)!).toBeCloseTo(0.15, 2);
    // One estimate for the pool, per unit of weight: the weight-3 backend is taken as 3x as fast.
    expect(m.learnedInflightMs(1)!).toBeCloseTo(m.learnedInflightMs(0)! / 3, 9);
    // Shown, not charged: the cost still counts the constant (policy-work.md, "Learned in-flight cost").
    expect(m.cost(0, 0, 10, now) - m.cost(0, 0, 0, now)).toBeCloseTo(40, 9);
  });

  it("regresses on the requests it ran with over its stay, not the count when it was sent", () => {
    // Every request is sent to an empty backend, then 7 more join it at once: by the count at sending all
    // ran alone (no slope to see), yet they ran in batches of 8 and 1.
    const m = new PrefillCostModel({ kvWeight: 0, inflightSamples: 8 });
    m.setBackends(fleet);
    let now = 0;
    for (let r = 0; r < 40; r++) {
      const crowd = r % 2 === 0;
      const first = m.routed(0, 100, 100, 0, now);
      const joiners = crowd ? Array.from({ length: 7 }, (_, j) => m.routed(0, 100, 100, j + 1, now + 1)) : [];
      const k = crowd ? 8 : 1;
      now += 10 + 99 * (7 + 0.5 * k);
      m.released(0, first, now, 10, 100);
      for (const s of joiners) m.released(0, s, now, 10, 100);
      now += 1_000;
    }
    expect(m.learnedInflightMs(0)!).toBeGreaterThan(0.35);
    expect(m.learnedInflightMs(0)!).toBeLessThan(0.65);
  });

  it("learns nothing from failures or from completions without output tokens", () => {
    const m = new PrefillCostModel({ kvWeight: 0, inflightSamples: 2 });
    m.setBackends(fleet);
    for (let k = 0; k < 20; k++) {
      const s = m.routed(0, 100, 100, k % 5, k * 1_000);
      if (k % 2 === 0) m.released(0, s, k * 1_000 + 500);
      else m.released(0, s, k * 1_000 + 500, 10);
    }
    expect(m.learnedInflightMs(0)).toBeUndefined();
  });

  it("fails loudly on a bad in-flight cost or window", () => {
    expect(() => new PrefillCostModel({ decodeMsPerInflight: -1 })).toThrow(RangeError);
    expect(() => new PrefillCostModel({ inflightSamples: 1 })).toThrow(RangeError);
  });
});
