import { describe, expect, it } from "vitest";
import { KeyMap } from "./key-map";
import { BlockPool } from "./kv-cache";

/** Takes n fresh blocks and caches `keys` in them, as a request whose prefill completed. */
function fill(pool: BlockPool, keys: number[]): Int32Array {
  const slots = new Int32Array(keys.length);
  pool.allocate(keys.length, slots, 0);
  keys.forEach((k, i) => {
    pool.register(slots[i]!, k);
  });
  return slots;
}

describe("BlockPool", () => {
  it("evicts least recently freed first, and a request's tail before its head", () => {
    const pool = new BlockPool(6);
    const a = [11, 12, 13];
    const b = [21, 22, 23];
    pool.release(fill(pool, a), 3);
    pool.release(fill(pool, b), 3);
    expect(pool.numFree).toBe(6);
    expect(pool.longestPrefix(a)).toBe(3);

    const one = new Int32Array(1);
    pool.allocate(1, one, 0); // evicts A's tail block (13)
    expect(pool.longestPrefix(a)).toBe(2);
    expect(pool.longestPrefix(b)).toBe(3);
    pool.allocate(1, one, 0); // then 12
    expect(pool.longestPrefix(a)).toBe(1);
    expect(pool.longestPrefix(b)).toBe(3);
  });

  it("a hit re-pins blocks and moves them to the recent end", () => {
    const pool = new BlockPool(4);
    const a = [1, 2];
    const b = [3, 4];
    pool.release(fill(pool, a), 2);
    pool.release(fill(pool, b), 2);
    const hit = new Int32Array(2);
    expect(pool.match(a, 2, hit)).toBe(2);
    expect(pool.lastMatchFree).toBe(2);
    pool.pinSlots(hit, 2);
    expect(pool.numFree).toBe(2);
    pool.release(hit, 2); // A is now the most recently used
    pool.allocate(2, new Int32Array(2), 0);
    expect(pool.longestPrefix(b)).toBe(0);
    expect(pool.longestPrefix(a)).toBe(2);
  });

  it("match stops at the first missing key and never counts referenced blocks as free", () => {
    const pool = new BlockPool(8);
    const held = fill(pool, [5, 6, 7]); // still referenced
    const out = new Int32Array(4);
    expect(pool.match([5, 6, 99, 7], 4, out)).toBe(2);
    expect(pool.lastMatchFree).toBe(0);
    expect(pool.match([5, 6, 7], 1, out)).toBe(1);
    pool.release(held, 3);
    expect(pool.match([5, 6, 7], 3, out)).toBe(3);
    expect(pool.lastMatchFree).toBe(3);
  });

  it("a duplicate block takes the key over from an unreferenced copy, not from one in use", () => {
    const pool = new BlockPool(4);
    const first = fill(pool, [42]);
    const dup = fill(pool, [42]); // first is in use: it keeps the key, dup stays anonymous
    pool.release(dup, 1);
    expect(pool.numCached).toBe(1);
    pool.allocate(2, new Int32Array(2), 0); // the two never-used blocks go first
    expect(pool.longestPrefix([42])).toBe(1);
    pool.release(first, 1); // now unreferenced
    const again = fill(pool, [42]); // takes the key over
    pool.allocate(1, new Int32Array(1), 0); // evicts the old copy: the key survives on the new one
    expect(pool.longestPrefix([42])).toBe(1);
    expect(pool.numCached).toBe(1);
    pool.release(again, 1);
    pool.allocate(1, new Int32Array(1), 0);
    expect(pool.longestPrefix([42])).toBe(0);
  });

  it("refuses to allocate more than is free", () => {
    const pool = new BlockPool(2);
    fill(pool, [1, 2]);
    expect(() => pool.allocate(1, new Int32Array(1), 0)).toThrow(RangeError);
  });
});

describe("KeyMap", () => {
  it("agrees with Map under random inserts and deletes (53-bit keys)", () => {
    const km = new KeyMap(500);
    const ref = new Map<number, number>();
    let x = 7;
    const rnd = (): number => {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      return x;
    };
    const pool: number[] = [];
    for (let i = 0; i < 700; i++) pool.push((rnd() % 2097152) * 4294967296 + rnd());
    for (let op = 0; op < 20000; op++) {
      const k = pool[rnd() % pool.length]!;
      if (rnd() % 3 === 0 || ref.size >= 500) {
        expect(km.delete(k)).toBe(ref.delete(k));
      } else {
        const v = rnd() % 1000;
        const stored = km.setIfAbsent(k, v);
        expect(stored).toBe(!ref.has(k));
        if (stored) ref.set(k, v);
      }
      expect(km.size).toBe(ref.size);
    }
    for (const k of pool) expect(km.get(k)).toBe(ref.get(k) ?? -1);
  });
});
