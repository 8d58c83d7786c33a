import { describe, expect, it } from "vitest";
import { LOCAL_PROBE_LOST_MS, LocalRouter, localRouterFor } from "./local-router";
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

  it("fair shedding between keys on its own counts: a key past its share while another asked is shed, the other is not", () => {
    // Two backends at a bound of 2: four slots, one kept for keys below their share (10%, rounded up).
    const shared = testPoolSpec(
      ["a", "b"].map((id) => ({ id, url: `http://${id}.internal` })),
      { maxInflightPerBackend: 2, keyShareHeadroomPercent: 10 },
      65536,
    );
    const local = new LocalRouter(shared);
    const first = (key: string, k: number) => {
      local.asked(key, 0);
      const full = local.fullBackends()!;
      expect(local.hasRoom(full, 0)).toBe(true);
      expect(local.overShare(key, 0)).toBeUndefined();
      return local.decide(req(1000 * k), ctx(), undefined, full, key).ticket;
    };
    // B asks once and leaves: contending for the next minute.
    local.finish(first("B", 0), { ok: true }, ctx());
    const a = [first("A", 1), first("A", 2), first("A", 3)];
    // A holds 3 of 4, past its share of 2: the last slot is B's.
    local.asked("A", 0);
    expect(local.overShare("A", 0)).toEqual({ held: 3, share: 2 });
    local.asked("B", 0);
    expect(local.overShare("B", 0)).toBeUndefined();
    // A's count is released with its decision: at 2 of 4 with one slot beyond the headroom, A is admitted.
    local.finish(a[0]!, { ok: true }, ctx());
    expect(local.overShare("A", 0)).toBeUndefined();
    // Off (KEY_SHARE_HEADROOM_PERCENT 0), and without a key, nobody is shed for fairness.
    const off = new LocalRouter({ ...shared, keyShareHeadroomPercent: 0 });
    off.asked("B", 0);
    for (let k = 0; k < 3; k++) off.decide(req(1000 * k), ctx(), undefined, off.fullBackends(), "A");
    expect(off.overShare("A", 0)).toBeUndefined();
    expect(local.overShare(undefined, 0)).toBeUndefined();
  });

  it("probes the backends it ejected itself on the RouterDO's schedule, once at a time, and takes one back after `rise` good probes", () => {
    const probing = testPoolSpec(
      ["a", "b", "c"].map((id) => ({ id, url: `http://${id}.internal` })),
      { healthProbeSeconds: 1, ejectAfterFaults: 3, restoreAfterChecks: 2, maxEjectionPercent: 70 },
      65536,
    );
    const local = new LocalRouter(probing);
    // c is out by the RouterDO's word: its to probe, never this isolate's.
    local.syncEjected(["c"]);
    for (let i = 0; i < 3; i++) {
      const t = local.decide(req(7), ctx(100 + i), ["a", "c"]);
      expect(t.decision.backendId).toBe("b");
      local.finish(t.ticket, { ok: false, failure: "connect_error" }, ctx(100 + i));
    }
    expect(homes(local, 60, 200).has("b")).toBe(false);
    expect(local.takeDueProbes(500)).toEqual([]); // not before its interval
    expect(local.takeDueProbes(1102)).toEqual(["b"]);
    expect(local.takeDueProbes(1103)).toEqual([]); // its probe is under way: not twice
    local.probed("b", false, 1200); // still down: the next one twice as late
    expect(local.takeDueProbes(2300)).toEqual([]);
    expect(local.takeDueProbes(3200)).toEqual(["b"]);
    local.probed("b", true, 3300);
    expect(homes(local, 60, 3300).has("b")).toBe(false); // one good check of two
    expect(local.takeDueProbes(4300)).toEqual(["b"]);
    local.probed("b", true, 4400);
    expect(homes(local, 60, 4400).has("b")).toBe(true);
    expect(homes(local, 60, 4400).has("c")).toBe(false);
    // A probe never heard back from (its waitUntil cut short) is handed out again, later.
    const lost = new LocalRouter(probing);
    for (let i = 0; i < 3; i++) {
      const t = lost.decide(req(7), ctx(0), ["a", "c"]);
      lost.finish(t.ticket, { ok: false, failure: "connect_error" }, ctx(0));
    }
    expect(lost.takeDueProbes(1000)).toEqual(["b"]);
    expect(lost.takeDueProbes(1000 + LOCAL_PROBE_LOST_MS - 1)).toEqual([]);
    expect(lost.takeDueProbes(1000 + LOCAL_PROBE_LOST_MS)).toEqual(["b"]);
  });
});
