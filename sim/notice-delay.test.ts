import { describe, expect, it } from "vitest";
import type { RouteReason } from "../src/routing/types";
import { completionAt, type NoticeDelay, NoticeDelays, NoticeQueue, parseNoticeDelay } from "./notice-delay";
import { prepareWorkload } from "./prepare";
import { GATEWAY_VIEW } from "./request-view";
import { type FleetConfig, type RouterFactory, type SimRouter, simulatePolicy } from "./simulator";
import { generatedSharedPrefix } from "./workloads/shared-prefix";

/** What a router heard, and when: the ticket is the request's index (round robin routes every request). */
interface Heard {
  first: Map<number, number>;
  done: Map<number, number>;
  order: string[];
}

// Round robin, which never reads a notice: the engines' timeline is the same whatever the router hears
// when, so a delayed run's notice times can be set against the inline run's.
function recording(heard: Heard): RouterFactory {
  return (backends) => {
    let next = 0;
    const router: SimRouter = {
      route() {
        const ticket = next++;
        const reason: RouteReason = "ring";
        return {
          decision: {
            backendId: backends[ticket % backends.length]!.id,
            reason,
            expectedCachedTokens: 0,
            availableCachedTokens: 0,
            inflightAtDecision: 0,
          },
          ticket,
        };
      },
      firstToken(ticket, ctx) {
        expect(heard.first.has(ticket as number)).toBe(false);
        expect(heard.done.has(ticket as number)).toBe(false);
        heard.first.set(ticket as number, ctx.now);
        heard.order.push(`f${ticket}`);
      },
      complete(ticket, _outcome, ctx) {
        expect(heard.done.has(ticket as number)).toBe(false);
        heard.done.set(ticket as number, ctx.now);
        heard.order.push(`c${ticket}`);
      },
    };
    return router;
  };
}

const fleet: FleetConfig = { backends: 4, kvCacheTokens: 200_000, seed: 7 };
// Two-token answers: a completion comes one decode step after its first token, within the delays' spread.
const small = (outputTokens = 2) =>
  prepareWorkload(generatedSharedPrefix({ rate: 40, seed: 3, groups: 8, promptsPerGroup: 8, outputTokens }));

function run(noticeDelay: NoticeDelay | undefined, policy = "prefix_aware") {
  const heard: Heard = { first: new Map(), done: new Map(), order: [] };
  const f: FleetConfig = noticeDelay === undefined ? fleet : { ...fleet, noticeDelay };
  const r = simulatePolicy(small(), f, policy, recording(heard), GATEWAY_VIEW);
  return { r, heard };
}

const steady = (meanMs: number): NoticeDelay => ({ meanMs, sigma: 0, carryMs: 0, firstTokens: true });

describe("notice delay (our router hears first tokens and completions late)", () => {
  it("delivers every first token and completion exactly `mean` ms after the engine when steady", () => {
    const inline = run(undefined);
    const late = run(steady(20));
    expect(late.heard.first.size).toBe(64);
    expect(late.heard.done.size).toBe(64);
    for (const [id, t] of inline.heard.first) expect(late.heard.first.get(id)).toBeCloseTo(t + 20, 9);
    for (const [id, t] of inline.heard.done) expect(late.heard.done.get(id)).toBeCloseTo(t + 20, 9);
    // What the engines did, and so every figure of the run, is the same: only the router's clock moved.
    expect({ ...late.r, wallMs: 0 }).toEqual({ ...inline.r, wallMs: 0 });
  });

  it("with jitter: a completion never before its first token, delays positive with the mean asked for", () => {
    const inline = run(undefined);
    const late = run({ meanMs: 20, sigma: 1.5, carryMs: 0, firstTokens: true });
    const gaps: number[] = [];
    for (const [id, t] of inline.heard.first) {
      const f = late.heard.first.get(id)!;
      const c = late.heard.done.get(id)!;
      expect(f).toBeGreaterThan(t);
      expect(c).toBeGreaterThanOrEqual(f);
      expect(late.heard.order.indexOf(`c${id}`)).toBeGreaterThan(late.heard.order.indexOf(`f${id}`));
      gaps.push(f - t);
    }
    // σ 1.5 spreads the draws widely: some land past the completion's own, which then waits for its first token.
    const clamped = [...inline.heard.done].filter(
      ([id, t]) => late.heard.done.get(id)! === late.heard.first.get(id)! && late.heard.first.get(id)! > t,
    );
    expect(clamped.length).toBeGreaterThan(0);
    expect(Math.min(...gaps)).toBeLessThan(10);
    expect(Math.max(...gaps)).toBeGreaterThan(40);
    // The same seed draws the same delays.
    expect(run({ meanMs: 20, sigma: 1.5, carryMs: 0, firstTokens: true }).heard.order).toEqual(
      late.heard.order,
    );
  });

  it("leaves a peer's notices at the engine's instant, and the default inline", () => {
    const inline = run(undefined, "dynamo");
    const peer = run(steady(50), "dynamo");
    expect([...peer.heard.first]).toEqual([...inline.heard.first]);
    expect([...peer.heard.done]).toEqual([...inline.heard.done]);
    const zero = run(steady(0));
    expect(zero.heard.order).toEqual(run(undefined).heard.order);
    expect([...zero.heard.done]).toEqual([...run(undefined).heard.done]);
  });

  it("nofirst: no first token reaches the router, completions still come (late)", () => {
    const inline = run(undefined);
    const late = run({ meanMs: 20, sigma: 0, carryMs: 0, firstTokens: false });
    expect(late.heard.first.size).toBe(0);
    for (const [id, t] of inline.heard.done) expect(late.heard.done.get(id)).toBeCloseTo(t + 20, 9);
  });

  it("carries a completion on the first route call at or after end + delay, within CARRY, else alone", () => {
    const arrivals = [0, 100, 130, 200];
    const at = (i: number) => arrivals[i]!;
    // Ready at 110 + 5 = 115: the arrival at 130 is within 20 ms and carries it.
    expect(completionAt(110, 5, 20, at, 0, 4, -Infinity)).toBe(130);
    // Ready at 135: the next call (200) is past 135 + 20, so it goes alone at 155.
    expect(completionAt(130, 5, 20, at, 0, 4, -Infinity)).toBe(155);
    // No carry: at end + delay; never before its first token's notice.
    expect(completionAt(130, 5, 0, at, 0, 4, -Infinity)).toBe(135);
    expect(completionAt(110, 5, 20, at, 0, 4, 140)).toBe(140);
    // Arrivals before `from` are past: not searched.
    expect(completionAt(90, 5, 20, at, 3, 4, -Infinity)).toBe(115);
  });

  it("parses MEAN[:SIGMA[:CARRY]][,nofirst] and refuses bad input", () => {
    expect(parseNoticeDelay("20")).toEqual({ meanMs: 20, sigma: 0, carryMs: 0, firstTokens: true });
    expect(parseNoticeDelay("50:0.5:20,nofirst")).toEqual({
      meanMs: 50,
      sigma: 0.5,
      carryMs: 20,
      firstTokens: false,
    });
    expect(() => parseNoticeDelay("-1")).toThrow(/MEAN/);
    expect(() => parseNoticeDelay("20:x")).toThrow(/SIGMA/);
    expect(() => parseNoticeDelay("20:0:0:1")).toThrow(/MEAN\[:SIGMA/);
  });

  it("draws a lognormal of the asked mean from its own seeded stream", () => {
    const d = new NoticeDelays({ meanMs: 20, sigma: 0.5, carryMs: 0, firstTokens: true }, 1, "p");
    const xs = Array.from({ length: 20_000 }, () => d.draw());
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(mean).toBeGreaterThan(19.5);
    expect(mean).toBeLessThan(20.5);
    expect(Math.min(...xs)).toBeGreaterThan(0);
  });

  it("queues notices earliest first, in queued order on a tie", () => {
    const q = new NoticeQueue<string>();
    for (const [at, s] of [
      [5, "a"],
      [1, "b"],
      [5, "c"],
      [3, "d"],
      [1, "e"],
    ] as const)
      q.push(at, s);
    const out: string[] = [];
    while (q.size > 0) out.push(q.pop()!.item);
    expect(out).toEqual(["b", "e", "d", "a", "c"]);
    expect(q.nextAt).toBe(Number.POSITIVE_INFINITY);
  });
});
