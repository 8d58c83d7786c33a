/** JSON inside the canonical prompt: sorted-key rendering, cut exactly at a limit, measured, fingerprinted. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  fingerprint,
  fingerprintJson,
  renderStableJson,
  stableJsonLength,
} from "../../src/prefix/canonical-json";

/** The reference: recursive sorted-key JSON, built by concatenation (an object would reorder integer-like keys). */
function reference(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(reference).join(",")}]`;
  if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${reference(o[k])}`).join(",")}}`;
}

/** The same value with its keys inserted in reverse order. */
function reversedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reversedKeys);
  if (v === null || typeof v !== "object") return v;
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o).reverse())
    Object.defineProperty(out, k, { value: reversedKeys(o[k]), enumerable: true });
  return out;
}

const SEED = 0x5eed;
// Strings with surrogates (paired and lone), quotes, backslashes and control characters: everything JSON escapes.
const nastyString = fc.string({
  unit: fc.oneof(
    fc.constantFrom("\uD83D", "\uDE00", "😀", '"', "\\", "\n", "\u0000", "é"),
    fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  ),
  maxLength: 40,
});
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    nastyString,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 6 }),
    fc.dictionary(nastyString, tie("value"), { maxKeys: 6 }),
  ),
})).value;

describe("renderStableJson", () => {
  it("renders sorted-key JSON, and a cut rendering is exactly the start of the whole", () => {
    fc.assert(
      fc.property(json, fc.nat({ max: 400 }), (v, limit) => {
        const whole = renderStableJson(v);
        expect(whole.text).toBe(reference(v));
        expect(whole.length).toBe(whole.text.length);
        const cut = renderStableJson(v, limit);
        expect(cut.text).toBe(whole.text.slice(0, limit));
        expect(cut.length).toBeGreaterThanOrEqual(Math.min(limit, whole.length) - 1);
      }),
      { seed: SEED, numRuns: 400 },
    );
  });

  it("measures without rendering: exact when nothing needs escaping", () => {
    const v = { b: [1, 22, "three"], a: { c: null, d: true } };
    expect(stableJsonLength(v)).toBe(reference(v).length);
    expect(renderStableJson(v, 0)).toEqual({ text: "", length: stableJsonLength(v) });
  });

  it("renders a huge value only up to the limit, and still knows its size", () => {
    const big = { enum: Array.from({ length: 1_000_000 }, (_, i) => i) };
    const r = renderStableJson(big, 1000);
    expect(r.text).toBe(JSON.stringify(big).slice(0, 1000));
    expect(r.length).toBe(JSON.stringify(big).length);
  });

  it("refuses a value nested deeper than its guard instead of overflowing the stack", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(() => renderStableJson(deep, 10)).toThrow(/nested deeper/);
  });
});

describe("fingerprints", () => {
  it("ignore key order and tell values apart", () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        expect(fingerprintJson(a)).toEqual(fingerprintJson(reversedKeys(a)));
        if (reference(a) !== reference(b)) expect(fingerprintJson(a)).not.toEqual(fingerprintJson(b));
      }),
      { seed: SEED, numRuns: 300 },
    );
    // Strings are length-prefixed in the hashed stream: these two render alike if quotes are not escaped.
    expect(fingerprintJson(['a","b'])).not.toEqual(fingerprintJson(["a", "b"]));
  });

  it("of a string depend on every character, the last one included", () => {
    const base = "iVBORw0KGgo".repeat(10_000);
    expect(fingerprint(`${base}A`)).not.toEqual(fingerprint(`${base}B`));
    expect(fingerprint(`${base}A`)).toEqual(fingerprint(`${base}A`));
  });
});
