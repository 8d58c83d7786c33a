import { describe, expect, it } from "vitest";
import { EngineModel } from "./engine-model";
import {
  ENGINE_PRESETS,
  enginePreset,
  kvBytesPerToken,
  LLAMA_3_1_8B_H100_VLLM,
  LLAMA_3_1_70B_4XH100_VLLM,
  QWEN3_30B_A3B_H100_VLLM,
} from "./presets";
import { StepCost } from "./step-time";
import type { EngineEvent } from "./types";

function runAll(e: EngineModel): EngineEvent[] {
  return e.advance(1e9);
}

function ev(events: EngineEvent[], id: string, kind: EngineEvent["kind"]): EngineEvent {
  const found = events.find((x) => x.id === id && x.kind === kind);
  if (found === undefined) throw new Error(`no ${kind} for ${id}`);
  return found;
}

describe("presets", () => {
  it("derive KV capacity from the model shape", () => {
    expect(kvBytesPerToken(32, 8, 128)).toBe(131_072);
    expect(kvBytesPerToken(80, 8, 128)).toBe(327_680);
    // 54 GiB of KV for the 8B on one H100 (see presets.ts).
    expect((LLAMA_3_1_8B_H100_VLLM.kvCacheTokens * 131_072) / 1024 ** 3).toBeCloseTo(54, 1);
    expect(LLAMA_3_1_70B_4XH100_VLLM.kvCacheTokens % 16).toBe(0);
  });

  it("8B on H100: a lone prompt prefills at the preset rate and decodes at the preset step time", () => {
    const c = LLAMA_3_1_8B_H100_VLLM;
    const e = new EngineModel(c);
    const prompt = 16_000;
    e.submit({ id: "a", promptTokens: prompt, outputTokens: 101, blocks: [] }, 0);
    const out = runAll(e);
    const ttft = ev(out, "a", "first_token").time;
    // Two chunks (8192 + 7808 tokens), each step paying the base time once.
    expect(ttft).toBeCloseTo((prompt / c.prefillTokensPerSec) * 1000 + 2 * c.decodeStepBaseMs, 9);
    const tpot = (ev(out, "a", "done").time - ttft) / 100;
    // 6.9 + 0.02 + 0.056 × ~16k context ≈ 7.8 ms.
    expect(tpot).toBeGreaterThan(7.7);
    expect(tpot).toBeLessThan(7.9);
  });

  it("8B on H100: a saturated engine prefills no faster than its compute allows and keeps decoding", () => {
    const c = LLAMA_3_1_8B_H100_VLLM;
    const e = new EngineModel(c);
    const n = 200;
    for (let i = 0; i < n; i++)
      e.submit({ id: `r${i}`, promptTokens: 2000, outputTokens: 200, blocks: [i * 1000] }, 0);
    const out = runAll(e);
    const lastFirst = Math.max(...out.filter((x) => x.kind === "first_token").map((x) => x.time));
    const end = Math.max(...out.map((x) => x.time));
    const m = e.metrics(end);
    expect(m.requestsFinished).toBe(n);
    expect(m.prefillSeconds).toBeCloseTo((n * 2000) / c.prefillTokensPerSec, 6);
    // Prefill of 400k tokens needs ≥ 20 s at 20k tokens/s; decode interference makes it slower.
    expect(lastFirst).toBeGreaterThan(20_000);
    expect(lastFirst).toBeLessThan(40_000);
    // Output throughput at this batch is in the thousands of tokens/s (published 8B/H100 figures: ~2–12k).
    const outTokPerSec = (n * 200) / (end / 1000);
    expect(outTokPerSec).toBeGreaterThan(1000);
    expect(outTokPerSec).toBeLessThan(20_000);
  });

  it("Qwen3-30B-A3B on H100: KV from the model shape, step time from the experts a step touches", () => {
    const c = QWEN3_30B_A3B_H100_VLLM;
    expect(kvBytesPerToken(48, 4, 128)).toBe(98_304);
    // 12.1 GiB of KV once 56.9 GiB of BF16 weights are loaded (see presets.ts).
    expect((c.kvCacheTokens * 98_304) / 1024 ** 3).toBeCloseTo(12.1, 1);
    expect(c.kvCacheTokens % 512).toBe(0);
    const cost = new StepCost(c);
    // Batch 1 reads 1/16 of the experts, batch 64 nearly all, a prefill chunk all of them.
    expect(cost.stepMs(1, 0, 0)).toBeCloseTo(1.05 + 0.02 + 24.7 / 16, 9);
    expect(cost.stepMs(64, 0, 0) - cost.stepMs(0, 0, 0)).toBeGreaterThan(0.98 * 24.7);
    expect(cost.stepMs(0, 0, 8192)).toBeCloseTo(1.05 + 24.7 + (8192 / 36_000) * 1000, 6);
  });

  it("the balance table in presets.ts holds: decode step at 32 × 2k context ÷ prefill time per token", () => {
    const balance = (name: string): { step: number; perToken: number; kv: number } => {
      const c = enginePreset(name);
      const step = new StepCost(c).stepMs(32, 32 * 2000, 0);
      return { step, perToken: step / (1000 / c.prefillTokensPerSec), kv: c.kvCacheTokens };
    };
    const rows = Object.keys(ENGINE_PRESETS).map((name) => [name, balance(name)] as const);
    const table = Object.fromEntries(
      rows.map(([name, b]) => [name, [+b.step.toFixed(1), Math.round(b.perToken), Math.round(b.kv / 1000)]]),
    );
    expect(table).toEqual({
      "llama-3.1-8b-h100-vllm": [11.1, 222, 442],
      "llama-3.1-70b-4xh100-vllm": [20.2, 202, 469],
      "qwen3-30b-a3b-h100-vllm": [25.9, 934, 132],
    });
    expect(() => enginePreset("gpt-9")).toThrow(/unknown engine preset "gpt-9": use llama-3.1-8b-h100-vllm/);
  });

  it("each preset's max_model_len is its model's served context, and vLLM could start it (one fits the KV)", () => {
    expect(LLAMA_3_1_8B_H100_VLLM.maxModelLen).toBe(131_072);
    expect(LLAMA_3_1_70B_4XH100_VLLM.maxModelLen).toBe(131_072);
    // Qwen3-30B-A3B with YaRN, factor 4 over 32,768 (not the config's native 40,960).
    expect(QWEN3_30B_A3B_H100_VLLM.maxModelLen).toBe(4 * 32_768);
    for (const name of Object.keys(ENGINE_PRESETS)) {
      const c = enginePreset(name);
      expect(c.maxModelLen).toBeLessThanOrEqual(c.kvCacheTokens);
      // The longest Mooncake request (prompt + output) fits every preset's context.
      expect(c.maxModelLen).toBeGreaterThanOrEqual(126_527);
    }
  });

  it.each([0, -1, 40_960.5, Number.NaN, undefined])(
    "a preset whose maxModelLen is %s fails loudly",
    (bad) => {
      const presets = { broken: { ...QWEN3_30B_A3B_H100_VLLM, maxModelLen: bad as number } };
      expect(() => enginePreset("broken", presets)).toThrow(
        /engine preset "broken": EngineConfig.maxModelLen must be a positive integer/,
      );
      expect(() => new EngineModel(presets.broken)).toThrow(/maxModelLen must be a positive integer/);
    },
  );

  it("Qwen3-30B-A3B on H100 runs the longest Mooncake request and a saturated batch", () => {
    const e = new EngineModel(QWEN3_30B_A3B_H100_VLLM);
    expect(e.fits(126_527, 500)).toBe(true);
    for (let i = 0; i < 64; i++)
      e.submit({ id: `r${i}`, promptTokens: 1000, outputTokens: 200, blocks: [i * 1000] }, 0);
    const out = runAll(e);
    const last = ev(out, "r63", "done");
    const first = ev(out, "r63", "first_token");
    // 64 sequences decode together: ~1.05 + 24.3 + 1.3 + context ≈ 30 ms a step.
    const tpot = (last.time - first.time) / 199;
    expect(tpot).toBeGreaterThan(26);
    expect(tpot).toBeLessThan(32);
  });
});
