import { describe, expect, it } from "vitest";
import { PrefillCostModel, type PrefillSlot } from "./cost-model";
import { EngineMemory } from "./engine-memory";
import type { EngineSignals } from "./types";

// One backend of 10,000 KV tokens prefilling 10 tokens/ms. A first request teaches the model a decode of
// 900 ms (route 0 → first token 100 → complete 1000). Then, at 2000 / 2010 / 2020: A holds 5,000 by the
// ledger (its cached history pins 9,000 in the engine), B (4,000) and C (100) are queued behind it. The
// ledger believes B fits (5,000 + 4,000 ≤ 10,000); the engine, at 9,000 used, cannot admit it.
const CAPACITY = 10_000;
function setup() {
  const model = new PrefillCostModel({ defaultPrefillTokensPerSec: 10_000 });
  model.setBackends([{ id: "g0", weight: 1, kvCacheTokens: CAPACITY }]);
  const memory = new EngineMemory(3000);
  memory.reset(1);
  const first = model.routed(0, 500, 0, 0, 0);
  model.released(0, first, 1000, 100);
  memory.completed(0, first, 1000);
  const a = model.routed(0, 4000, 1000, 0, 2000);
  const b = model.routed(0, 3000, 1000, 1, 2010);
  const c = model.routed(0, 100, 0, 2, 2020);
  return { model, memory, a, b, c };
}
const reading = (r: Partial<EngineSignals>): EngineSignals => ({
  running: 1,
  waiting: 2,
  kvUsage: 0.9,
  sampledAt: 2100,
  ownInflight: 3,
  ...r,
});

describe("EngineMemory.headWaitMs", () => {
  it("a reading whose queue head waits for memory: a request sent now waits until that head is in", () => {
    const { model, memory, a } = setup();
    // The head is B (the older of the two waiting): it needs 4,000, 1,000 are free: A must finish first,
    // expected one decode (900 ms) after its predicted prefill end.
    const wait = memory.headWaitMs(reading({}), 0, CAPACITY, model, 2200);
    expect(wait).toBeCloseTo(a.end + 900 - 2200, 6);
    // The ledger alone predicts only the queue ahead (B and C fit by its count): the start moves from the
    // end of that queue to the head's admission.
    const queue = model.queueWaitMs(0, 2200);
    expect(wait).toBeGreaterThan(queue + 500);
    const ledger = model.cost(0, 100, 3, 2200, 0);
    expect(model.cost(0, 100, 3, 2200, 0, wait) - ledger).toBeCloseTo(wait - queue, 6);
    // A least wait shorter than the ledger's own changes nothing.
    expect(model.cost(0, 100, 3, 2200, 0, queue / 2)).toBe(ledger);
  });

  it("changes nothing for a reading that is stale, unattributed, absent, without waiting, or whose head fits", () => {
    const { model, memory } = setup();
    expect(memory.headWaitMs(reading({ sampledAt: 2100 }), 0, CAPACITY, model, 5101)).toBe(0);
    expect(memory.headWaitMs(reading({ ownInflight: undefined }), 0, CAPACITY, model, 2200)).toBe(0);
    expect(memory.headWaitMs(undefined, 0, CAPACITY, model, 2200)).toBe(0);
    expect(memory.headWaitMs(reading({ running: 3, waiting: 0 }), 0, CAPACITY, model, 2200)).toBe(0);
    // 5,000 free: B fits, its wait is the step budget's, which the ledger's queue covers.
    expect(memory.headWaitMs(reading({ kvUsage: 0.5 }), 0, CAPACITY, model, 2200)).toBe(0);
  });

  it("the waiting are the latest to arrive: one waiting is C, which fits", () => {
    const { model, memory } = setup();
    expect(memory.headWaitMs(reading({ running: 2, waiting: 1 }), 0, CAPACITY, model, 2200)).toBe(0);
  });

  it("nothing once the head completed since the reading, or once what ran then freed enough", () => {
    const s1 = setup();
    s1.model.released(0, s1.b, 2150);
    s1.memory.completed(0, s1.b, 2150);
    expect(s1.memory.headWaitMs(reading({}), 0, CAPACITY, s1.model, 2200)).toBe(0);
    const s2 = setup();
    s2.model.released(0, s2.a, 2150);
    s2.memory.completed(0, s2.a, 2150);
    expect(s2.memory.headWaitMs(reading({}), 0, CAPACITY, s2.model, 2200)).toBe(0);
  });

  it("walks the waiting in arrival order: those that fit are admitted, the first that does not is the head", () => {
    const { model, memory, a, b } = setup();
    // D (6,000) queued after C. At 4,500 free, B and C fit and are admitted; D needs 5,600 more, which A
    // alone (5,000) does not free: D is in once B is out too.
    model.routed(0, 5000, 1000, 3, 2030);
    const r = reading({ waiting: 3, ownInflight: 4, kvUsage: 0.55 });
    expect(memory.headWaitMs(r, 0, CAPACITY, model, 2200)).toBeCloseTo(b.end + 900 - 2200, 6);
    expect(b.end).toBeGreaterThan(a.end);
    // C completed since: it was admitted, so B ahead of it was too; D still waits for A and B.
    const c = model.openSlots(0).find((slot) => slot.at === 2020)!;
    model.released(0, c, 2150);
    memory.completed(0, c, 2150);
    expect(memory.headWaitMs(r, 0, CAPACITY, model, 2200)).toBeCloseTo(b.end + 900 - 2200, 6);
  });

  it("requests routed after the reading are not in its queue", () => {
    const { model, memory } = setup();
    // Two more after the reading: the engine's two waiting are still B and C.
    model.routed(0, 100, 0, 3, 2150);
    model.routed(0, 100, 0, 4, 2160);
    expect(memory.headWaitMs(reading({}), 0, CAPACITY, model, 2200)).toBeGreaterThan(0);
    expect(
      memory.headWaitMs(reading({ sampledAt: 2005, running: 1, waiting: 0 }), 0, CAPACITY, model, 2200),
    ).toBe(0);
  });

  it("a request routed at the reading's own instant is not in its queue (the reading was taken first)", () => {
    const { model, memory, a } = setup();
    // Read at 2020, before C (routed at 2020) reached the engine: one waiting, B, behind A; 1,000 free. B is
    // the head, in once A is out. Counting C as the waiting one would take B for running and C, which fits,
    // for the queue: no wait.
    const r = reading({ sampledAt: 2020, running: 1, waiting: 1, ownInflight: 2 });
    expect(memory.headWaitMs(r, 0, CAPACITY, model, 2020)).toBeCloseTo(a.end + 900 - 2020, 6);
  });

  it("nothing before the model has learned how long a request decodes there", () => {
    const model = new PrefillCostModel({ defaultPrefillTokensPerSec: 10_000 });
    model.setBackends([{ id: "g0", weight: 1, kvCacheTokens: CAPACITY }]);
    const memory = new EngineMemory(3000);
    memory.reset(1);
    const slots: PrefillSlot[] = [
      model.routed(0, 4000, 1000, 0, 2000),
      model.routed(0, 3000, 1000, 1, 2010),
      model.routed(0, 100, 0, 2, 2020),
    ];
    expect(slots).toHaveLength(3);
    expect(memory.headWaitMs(reading({}), 0, CAPACITY, model, 2200)).toBe(0);
  });
});
