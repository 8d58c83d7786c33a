import { describe, expect, it } from "vitest";
import { blocksOf, keptPositions, routeKeys } from "./route-keys";
import { Router, type RouteTicket } from "./router";
import { defaultIndexStride } from "./router-options";
import { seededRandom } from "./seeded-random";
import { type BackendSpec, type BlockKey, POLICY_NAMES } from "./types";

const BLOCK = 16;
const STRIDE = defaultIndexStride(BLOCK);

/** Chained keys: a shared head of `shared` blocks from one of a few prompts, then a tail of its own. */
function request(random: () => number): { blocks: BlockKey[]; promptTokens: number } {
  const n = Math.floor(random() * 70);
  const head = Math.floor(random() * 6);
  const shared = Math.min(n, Math.floor(random() * 40));
  const tail = Math.floor(random() * 2 ** 40);
  const blocks = Array.from({ length: n }, (_, j) => (j < shared ? head * 100_003 + j : tail + j));
  return { blocks, promptTokens: n * BLOCK + Math.floor(random() * BLOCK) };
}

describe("route keys", () => {
  it("keep the leading blocks, every stride-th block and the one after it, and nothing else", () => {
    // Stride 4: lead 0..3, anchors 3, 7, 11 …, divergence keys 4, 8, 12 ….
    expect(keptPositions(14, BLOCK, 4)).toEqual([0, 1, 2, 3, 4, 7, 8, 11, 12]);
    expect(keptPositions(2, BLOCK, 4)).toEqual([0, 1]);
    expect(keptPositions(0, BLOCK, 4)).toEqual([]);
    // About two keys in four cross for an 8k-token prompt.
    expect(keptPositions(512, BLOCK, STRIDE).length).toBe(258);
  });

  it("round-trip: the kept positions hold their keys, the others NaN, the count is the request's", () => {
    const blocks = Array.from({ length: 30 }, (_, j) => 1000 + j);
    const back = blocksOf(routeKeys(blocks, BLOCK, STRIDE), BLOCK, STRIDE);
    expect(back.length).toBe(30);
    const kept = new Set(keptPositions(30, BLOCK, STRIDE));
    back.forEach((k, j) => {
      if (kept.has(j)) expect(k).toBe(blocks[j]);
      else expect(k).toBeNaN();
    });
    expect(() => blocksOf({ count: 30, kept: new Float64Array(3) }, BLOCK, STRIDE)).toThrow(/route keys/);
  });

  it.each(POLICY_NAMES)(
    "%s decides exactly as with every key, over a run that fills, hits and corrects the index",
    (policy) => {
      const specs: BackendSpec[] = Array.from({ length: 6 }, (_, i) => ({
        id: `b${i}`,
        weight: 1 + (i % 2),
        kvCacheTokens: 8_000,
      }));
      const full = new Router(specs, { policy, blockTokens: BLOCK });
      const sent = new Router(specs, { policy, blockTokens: BLOCK });
      const draw = seededRandom(11);
      const ra = seededRandom(5);
      const rb = seededRandom(5);
      const open: [RouteTicket, RouteTicket][] = [];
      const reasons = new Set<string>();
      for (let i = 0; i < 3000; i++) {
        const req = request(draw);
        const a = full.route(req, { now: i, random: ra });
        const b = sent.route(
          { ...req, blocks: blocksOf(routeKeys(req.blocks, BLOCK, STRIDE), BLOCK, STRIDE) },
          { now: i, random: rb },
        );
        expect(b.decision).toEqual(a.decision);
        reasons.add(a.decision.reason);
        open.push([a.ticket, b.ticket]);
        if (open.length > 24 || draw() < 0.3) {
          const [ta, tb] = open.splice(Math.floor(draw() * open.length), 1)[0]!;
          const outcome =
            draw() < 0.1
              ? { ok: false }
              : { ok: true, promptTokens: 512, cachedTokens: Math.floor(draw() * 512) };
          full.complete(ta, outcome, { now: i, random: ra });
          sent.complete(tb, outcome, { now: i, random: rb });
        }
      }
      // The run reached the index: prefix_aware placed requests by affinity, not only by the ring.
      if (policy === "prefix_aware") expect(reasons).toContain("affinity");
    },
  );
});
