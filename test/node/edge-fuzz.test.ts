/**
 * Fuzz of the pure edge path under Node: body bytes → readInferenceBody →
 * prefixKeysForRequest, over random and adversarial bodies (long runs of one
 * character, deep nesting, huge arrays, invalid UTF-8, damaged JSON).
 *
 * Every body either parses or is refused with a typed 4xx GatewayError —
 * never anything else — and keying work is bounded by prefixTokens,
 * measured deterministically: characters the tokenizer read, the longest
 * piece it merged, tokens and segments keyed. Keys do not depend on the
 * memo's state. Wall time is only a generous backstop.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  clearPrefixMemo,
  MAX_KEYED_CHARS_PER_TOKEN,
  prefixKeysForRequest,
} from "../../src/prefix/request-keys";
import { o200kTokenizer } from "../../src/prefix/tokenizer";
import { GatewayError } from "../../src/worker/errors";
import { readInferenceBody } from "../../src/worker/request/request-body";
import { type FuzzBody, fuzzBodies } from "./fuzz-bodies";

const SEED = 20261130;
/**
 * What one tokenizer step may read past the character budget: one piece and
 * its lookahead (~4.1k UTF-16 units for o200k with MAX_PIECE_RUN = 1024).
 * Written as a number, so that a looser tokenizer fails here.
 */
const PIECE_CHARS = 4200;
const scale = { maxRun: 300_000, maxArray: 300_000, maxDepth: 100_000, backendSafe: false, model: "m" };

async function check(b: FuzzBody, prefixTokens: number): Promise<string> {
  const t0 = performance.now();
  const req = new Request("https://gateway.test/v1/x", { method: "POST", body: b.bytes });
  let parsed: Awaited<ReturnType<typeof readInferenceBody>>;
  try {
    parsed = await readInferenceBody(req, b.kind);
  } catch (err) {
    // The only acceptable failure: a typed client error, rendered as an OpenAI error by the app.
    expect(err, `${b.label}: ${String(err)}`).toBeInstanceOf(GatewayError);
    const e = err as GatewayError;
    expect(e.status).toBeGreaterThanOrEqual(400);
    expect(e.status).toBeLessThan(500);
    return `${e.status} ${e.code}`;
  }
  const tokenizer = o200kTokenizer();
  const work = { ...tokenizer.work };
  const opts = { model: "m", blockTokens: 16, prefixTokens };
  const keys = prefixKeysForRequest(b.kind, parsed.body, opts);
  const read = tokenizer.work.chars - work.chars;
  // Keying reads at most the character budget plus one piece, whatever the body.
  expect(read, b.label).toBeLessThanOrEqual(MAX_KEYED_CHARS_PER_TOKEN * prefixTokens + PIECE_CHARS);
  expect(tokenizer.work.longestMergeBytes).toBeLessThanOrEqual(3 * PIECE_CHARS);
  expect(keys.keyed.tokens).toBeLessThanOrEqual(prefixTokens);
  expect(keys.keyed.segments).toBeLessThanOrEqual(prefixTokens);
  expect(keys.blocks.length).toBe(Math.floor(keys.keyed.tokens / 16));
  expect(Number.isFinite(keys.promptTokens)).toBe(true);
  // Same keys from a cold memo (the warm one holds texts of earlier runs, under other budgets).
  clearPrefixMemo();
  expect(prefixKeysForRequest(b.kind, parsed.body, opts).blocks).toEqual(keys.blocks);
  expect(performance.now() - t0, `${b.label}: wall-clock backstop`).toBeLessThan(5_000);
  return "ok";
}

describe("edge fuzz (Node): parser, canonicaliser, keying", () => {
  it("answers every body with a parse or a typed 4xx, with keying work bounded by prefixTokens", async () => {
    const outcomes = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(fuzzBodies(scale), fc.constantFrom(16, 256, 8192), async (b, prefixTokens) => {
        const o = await check(b, prefixTokens);
        outcomes.set(o, (outcomes.get(o) ?? 0) + 1);
        if (process.env.FUZZ_DEBUG) console.log(b.label, b.bytes.length, o);
      }),
      // No shrinking: bodies are megabytes; the seed and the label reproduce a failure.
      { seed: SEED, numRuns: 150, endOnFailure: true },
    );
    // The generator reaches both sides: bodies that are keyed and several kinds of refusal.
    expect(outcomes.get("ok") ?? 0).toBeGreaterThan(50);
    expect(outcomes.get("400 invalid_value") ?? 0).toBeGreaterThan(10);
    expect(outcomes.get("400 invalid_json") ?? 0).toBeGreaterThan(5);
    expect(outcomes.get("400 json_too_complex") ?? 0).toBeGreaterThan(2);
  }, 60_000);
});
