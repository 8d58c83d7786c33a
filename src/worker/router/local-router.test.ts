import { describe, expect, it } from "vitest";
import { LocalRouter, localRouterFor } from "./local-router";
import { testPoolSpec } from "./pool-spec-fixture";

const spec = testPoolSpec(
  ["a", "b", "c"].map((id) => ({ id, url: `http://${id}.internal` })),
  {},
  65536,
);
const ctx = (now = 0) => ({ now, random: () => 0.5 });
const req = (key: number) => ({ blocks: [key, key + 1, key + 2, key + 3], promptTokens: 64 });

/** The backend a fresh decision for each of `n` distinct requests lands on, completed at once. */
function homes(local: LocalRouter, n: number, now = 0): Set<string> {
  const seen = new Set<string>();
  for (let k = 0; k < n; k++) {
    const { decision, ticket } = local.decide(req(1000 * k), ctx(now));
    seen.add(decision.backendId);
    local.finish(ticket, { ok: true }, ctx(now));
  }
  return seen;
}

describe("LocalRouter (decisions while the RouterDO is out of reach)", () => {
  it("places by consistent hashing: the same request, the same home", () => {
    const local = new LocalRouter(spec);
    const first = local.decide(req(7), ctx());
    expect(first.decision.reason).toBe("ring");
    expect(local.inflight(first.decision.backendId)).toBe(1);
    local.finish(first.ticket, { ok: true }, ctx());
    expect(local.inflight(first.decision.backendId)).toBe(0);
    expect(local.decide(req(7), ctx()).decision.backendId).toBe(first.decision.backendId);
  });

  it("holds out what the RouterDO last reported ejected, and takes it back when it no longer does", () => {
    const local = new LocalRouter(spec);
    local.syncEjected(["b", "not-in-this-pool"]);
    expect(homes(local, 60).has("b")).toBe(false);
    local.syncEjected(undefined);
    expect(homes(local, 60).has("b")).toBe(true);
  });

  it("holds out a backend the RouterDO has on probation on its first fault, not its fall-th", () => {
    const toB = (local: LocalRouter, now: number) => local.decide(req(7), ctx(now), ["a", "c"]);
    const fault = { ok: false, failure: "connect_error" } as const;
    // b came back at t=1000 with one relapse and owes RESTORE_AFTER_CHECKS (2) good requests (RouterDO's view).
    const onProbation = [{ id: "b", relapses: 1, backAt: 1000, probation: 2 }];
    const local = new LocalRouter(spec);
    local.syncEjected(["b"]);
    local.syncEjected(undefined, onProbation);
    const first = toB(local, 2000);
    expect(first.decision.backendId).toBe("b");
    local.finish(first.ticket, fault, ctx(2000));
    expect(homes(local, 60, 2000).has("b")).toBe(false);
    // One good request paid here leaves one owed: the next fault still holds it out.
    const paid = new LocalRouter(spec);
    paid.syncEjected(undefined, onProbation);
    const good = toB(paid, 2000);
    paid.finish(good.ticket, { ok: true }, ctx(2000));
    const bad = toB(paid, 2001);
    paid.finish(bad.ticket, fault, ctx(2001));
    expect(homes(paid, 60, 2001).has("b")).toBe(false);
    // Once the RouterDO no longer lists it (paid fleet-wide), one fault is one of `fall` (3).
    const cleared = new LocalRouter(spec);
    cleared.syncEjected(undefined, onProbation);
    cleared.syncEjected(undefined, undefined);
    for (let i = 0; i < 2; i++) {
      const t = toB(cleared, 2000 + i);
      cleared.finish(t.ticket, fault, ctx(2000 + i));
    }
    expect(homes(cleared, 60, 2002).has("b")).toBe(true);
  });

  it("takes back a backend its own faults ejected once the RouterDO answers with it in rotation, its probation kept", () => {
    const toB = (local: LocalRouter, now: number) => local.decide(req(7), ctx(now), ["a", "c"]);
    const fault = { ok: false, failure: "connect_error" } as const;
    const local = new LocalRouter(spec);
    local.syncEjected(undefined);
    // The RouterDO out of reach: three faults of b's here (fall), their observe() calls lost with it.
    for (let i = 0; i < 3; i++) {
      const t = toB(local, 100 + i);
      local.finish(t.ticket, fault, ctx(100 + i));
    }
    expect(homes(local, 60, 200).has("b")).toBe(false);
    // The RouterDO answers again, b in rotation (the same view as before): the pool's word wins.
    local.syncEjected(undefined);
    expect(homes(local, 60, 300).has("b")).toBe(true);
    // What the RouterDO still lists stays out.
    local.syncEjected(["b"]);
    local.syncEjected(["b"]);
    expect(homes(local, 60, 400).has("b")).toBe(false);
    // On probation: its one fault here holds it out; taken back by the next answer, still on probation.
    const onProbation = [{ id: "b", relapses: 1, backAt: 1000, probation: 2 }];
    const p = new LocalRouter(spec);
    p.syncEjected(undefined, onProbation);
    const first = toB(p, 2000);
    p.finish(first.ticket, fault, ctx(2000));
    expect(homes(p, 60, 2000).has("b")).toBe(false);
    p.syncEjected(undefined, onProbation);
    // (Only b is asked: good requests there would pay its probation off.)
    const again = toB(p, 2002);
    expect(again.decision.backendId).toBe("b");
    p.finish(again.ticket, fault, ctx(2002));
    expect(homes(p, 60, 2002).has("b")).toBe(false);
  });

  it("avoids a retry's failed backend, and a 429 keeps its backend out for its retry-after", () => {
    const local = new LocalRouter(spec);
    const { decision, ticket } = local.decide(req(7), ctx());
    expect(local.decide(req(7), ctx(), decision.backendId).decision.backendId).not.toBe(decision.backendId);
    local.finish(ticket, { ok: false, failure: "throttled", retryAfterMs: 5000 }, ctx(0));
    expect(homes(local, 60, 1000).has(decision.backendId)).toBe(false);
    expect(homes(local, 60, 6000).has(decision.backendId)).toBe(true);
  });

  it("is one per pool version: kept while the version stays, replaced when it changes", () => {
    const v1 = localRouterFor("m", "v1", spec);
    expect(localRouterFor("m", "v1", spec)).toBe(v1);
    const v2 = localRouterFor("m", "v2", spec);
    expect(v2).not.toBe(v1);
    expect(localRouterFor("m", "v1", spec)).not.toBe(v1);
  });
  it("bounded: sheds only when its own decisions fill every usable backend; unbounded, it never does", () => {
    expect(new LocalRouter(spec).fullBackends()).toBeUndefined();
    const bounded = testPoolSpec(
      [
        { id: "a", url: "http://a.internal" },
        { id: "b", url: "http://b.internal", maxInflight: 2 },
      ],
      { maxInflightPerBackend: 1 },
      65536,
    );
    const local = new LocalRouter(bounded);
    const served: string[] = [];
    for (let k = 0; k < 3; k++) {
      const full = local.fullBackends()!;
      expect(local.hasRoom(full, 0)).toBe(true);
      served.push(local.decide(req(1000 * k), ctx(), undefined, full).decision.backendId);
    }
    // a holds 1 (its pool bound), b 2 (its own): each at its bound, never past it.
    expect(served.sort()).toEqual(["a", "b", "b"]);
    expect(local.hasRoom(local.fullBackends()!, 0)).toBe(false);
    // b ejected, as the RouterDO last said: its room is no room; a's is.
    local.syncEjected(["b"]);
    expect(local.hasRoom(new Set(["a"]), 0)).toBe(false);
    expect(local.hasRoom(new Set(), 0)).toBe(true);
  });
});
