/**
 * The streaming JSON shape check: exact counts (depth, values, keys) for any
 * way the body is cut into chunks, strings (escapes included) never counted.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GatewayError } from "../../src/worker/errors";
import { type JsonShapeLimits, JsonShapeMeter } from "../../src/worker/request/json-shape";

/** What the meter counts, from the parsed value: max container depth; containers + elements after the first; keys. */
function shapeOf(v: unknown, depth = 0): { depth: number; values: number; keys: number } {
  if (v === null || typeof v !== "object") return { depth, values: 0, keys: 0 };
  const children = Array.isArray(v) ? v : Object.values(v);
  const out = {
    depth: depth + 1,
    values: 1 + Math.max(0, children.length - 1),
    keys: Array.isArray(v) ? 0 : children.length,
  };
  for (const c of children) {
    const s = shapeOf(c, depth + 1);
    out.depth = Math.max(out.depth, s.depth);
    out.values += s.values;
    out.keys += s.keys;
  }
  return out;
}

/** Feeds `bytes` cut at `cuts`; returns the error code thrown, or "ok". */
function meter(bytes: Uint8Array, cuts: readonly number[], limits: JsonShapeLimits): string {
  const m = new JsonShapeMeter(limits);
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  let from = 0;
  try {
    for (const c of [...at, bytes.length]) {
      m.feed(bytes.subarray(from, c));
      from = c;
    }
    return "ok";
  } catch (err) {
    if (err instanceof GatewayError) return `${err.status} ${err.code}`;
    throw err;
  }
}

const tricky = fc.string({
  unit: fc.constantFrom('"', "\\", "[", "]", "{", "}", ",", ":", "é", "😀", "a", "\n"),
  maxLength: 12,
});
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    tricky,
    fc.integer(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 5 }),
    fc.dictionary(tricky, tie("value"), { maxKeys: 5 }),
  ),
})).value;

describe("JsonShapeMeter", () => {
  it("passes a body at each limit and refuses it one below, however the bytes are chunked", () => {
    const enc = new TextEncoder();
    fc.assert(
      fc.property(json, fc.array(fc.nat(), { maxLength: 8 }), (v, cuts) => {
        const bytes = enc.encode(JSON.stringify(v));
        const s = shapeOf(v);
        const exact = { maxDepth: s.depth, maxValues: s.values, maxKeys: s.keys };
        expect(meter(bytes, cuts, exact)).toBe("ok");
        if (s.depth > 0)
          expect(meter(bytes, cuts, { ...exact, maxDepth: s.depth - 1 })).toBe("400 json_too_complex");
        if (s.values > 0)
          expect(meter(bytes, cuts, { ...exact, maxValues: s.values - 1 })).toBe("400 json_too_complex");
        if (s.keys > 0)
          expect(meter(bytes, cuts, { ...exact, maxKeys: s.keys - 1 })).toBe("400 json_too_complex");
      }),
      { seed: 0x15a9e, numRuns: 500 },
    );
  });

  it("refuses deep nesting as soon as it passes the limit, without reading further", () => {
    const m = new JsonShapeMeter({ maxDepth: 128, maxValues: 1e9, maxKeys: 1e9 });
    m.feed(new TextEncoder().encode("[".repeat(128)));
    expect(() => m.feed(new TextEncoder().encode("["))).toThrow(/nesting deeper than 128/);
  });

  it("scans a long string with many escapes in one pass", () => {
    const body = new TextEncoder().encode(JSON.stringify({ s: 'line "quoted"\n\\'.repeat(1_000_000) }));
    const t0 = performance.now();
    expect(meter(body, [7, 1000, 5_000_001], { maxDepth: 1, maxValues: 1, maxKeys: 1 })).toBe("ok");
    // A backstop only: a rescan per escape would take minutes here.
    expect(performance.now() - t0).toBeLessThan(2_000);
  });
});
