import { describe, expect, it } from "vitest";
import { type HealthRow, type HealthSettings, HealthTracker, RELAPSE_WINDOW } from "./backend-health";

const SETTINGS: HealthSettings = { fall: 3, rise: 2, maxEjectionPercent: 50, probeIntervalMs: 1000 };

function tracker(ids = ["a", "b", "c", "d"], settings: Partial<HealthSettings> = {}): HealthTracker {
  const t = new HealthTracker({ ...SETTINGS, ...settings });
  t.setBackends(ids);
  return t;
}

describe("HealthTracker", () => {
  it("ejects after `fall` consecutive faults, and a success in between resets the count", () => {
    const t = tracker();
    expect(t.fault("a", 0, 10)).toBeNull();
    expect(t.fault("a", 0, 11)).toBeNull();
    t.success("a", 12);
    expect(t.get("a").faults).toBe(0);
    expect(t.fault("a", 0, 13)).toBeNull();
    expect(t.fault("a", 0, 14)).toBeNull();
    expect(t.fault("a", 0, 15)).toBe("ejected");
    expect(t.isEjected("a")).toBe(true);
    expect(t.get("a").nextProbeAt).toBe(1015);
  });

  it("never ejects more than maxEjectionPercent of the pool (at least one), nor a pool's only backend", () => {
    const t = tracker();
    for (const id of ["a", "b", "c", "d"]) for (let k = 0; k < 5; k++) t.fault(id, 0, k);
    expect(t.ejectedCount).toBe(2);
    // The other two stay in rotation with their faults counted, and take the next free slot.
    expect(t.get("c").faults).toBe(5);
    const one = tracker(["solo"]);
    for (let k = 0; k < 10; k++) expect(one.fault("solo", 0, k)).toBeNull();
    expect(one.isEjected("solo")).toBe(false);
    const tiny = tracker(["x", "y", "z"], { maxEjectionPercent: 10 });
    for (const id of ["x", "y"]) for (let k = 0; k < 3; k++) tiny.fault(id, 0, k);
    expect(tiny.ejectedCount).toBe(1);
  });

  it("anyUsable: none when every backend outside the drained is ejected or past `fall` faults held in by the cap (one ejected, probed)", () => {
    const t = tracker(["a", "b"]);
    const none = new Set<string>();
    expect(t.anyUsable(none)).toBe(true);
    for (let k = 0; k < 3; k++) t.fault("a", 0, k);
    expect(t.isEjected("a")).toBe(true);
    expect(t.anyUsable(none)).toBe(true);
    // b past `fall`: the cap (one of two) keeps it in rotation, but it is failing.
    for (let k = 0; k < 2; k++) t.fault("b", 0, k);
    expect(t.anyUsable(none)).toBe(true);
    t.fault("b", 0, 2);
    expect(t.isEjected("b")).toBe(false);
    expect(t.failing("b")).toBe(true);
    expect(t.anyUsable(none)).toBe(false);
    // A success brings b back; a drained backend never counts.
    t.success("b", 3);
    expect(t.anyUsable(none)).toBe(true);
    expect(t.anyUsable(new Set(["b"]))).toBe(false);
    // One backend, failing and never ejected (the cap): no probe would tell when it recovers, so it still serves.
    const solo = tracker(["solo"]);
    for (let k = 0; k < 5; k++) solo.fault("solo", 0, k);
    expect(solo.failing("solo")).toBe(true);
    expect(solo.anyUsable(none)).toBe(true);
    expect(solo.anyUsable(new Set(["solo"]))).toBe(false);
  });

  it("watchHeld: once every backend is failing, the ones the cap holds in are probed; good probes clear them", () => {
    const none = new Set<string>();
    // One backend (a cell of one): never ejected, so never probed, until watched.
    const solo = tracker(["solo"]);
    expect(solo.watchHeld(none, 0)).toBe(false); // not failing: nothing to watch
    for (let k = 0; k < 3; k++) solo.fault("solo", 0, k);
    expect(solo.isEjected("solo")).toBe(false);
    expect(solo.due(10_000)).toEqual([]);
    expect(solo.watchHeld(none, 100)).toBe(true);
    expect(solo.watchHeld(none, 200)).toBe(false); // already watched: the schedule is not moved
    expect(solo.anyUsable(none)).toBe(false); // its probe tells of the recovery: a cell may be passed over
    expect(solo.nextProbeAt()).toBe(1100);
    expect(solo.due(1100)).toEqual(["solo"]);
    // A failed probe backs off as an ejected backend's does; a fault resets the good-check streak.
    expect(solo.probed("solo", false, 1100)).toBeNull();
    expect(solo.get("solo").nextProbeAt).toBe(3100);
    solo.probed("solo", true, 3100);
    expect(solo.get("solo").goodChecks).toBe(1);
    solo.fault("solo", 0, 3200);
    expect(solo.get("solo").goodChecks).toBe(0);
    // `rise` good probes clear it: in rotation with no fault, not probed, nothing "restored" (never ejected).
    expect(solo.probed("solo", true, 4100)).toBeNull();
    expect(solo.probed("solo", true, 5100)).toBeNull();
    expect(solo.get("solo")).toMatchObject({ faults: 0, nextProbeAt: null });
    expect(solo.failing("solo")).toBe(false);
    expect(solo.due(1e9)).toEqual([]);
    // Or one success clears it at once.
    for (let k = 0; k < 3; k++) solo.fault("solo", 0, k);
    solo.watchHeld(none, 6000);
    solo.success("solo", 6001);
    expect(solo.get("solo")).toMatchObject({ faults: 0, nextProbeAt: null });
    // With one backend not failing, nothing is watched (the cap's backend takes requests as before).
    const two = tracker(["a", "b", "c", "d"]);
    for (let k = 0; k < 3; k++) two.fault("a", 0, k);
    for (let k = 0; k < 3; k++) two.fault("b", 0, k);
    for (let k = 0; k < 3; k++) two.fault("c", 0, k);
    expect(two.isEjected("a") && two.isEjected("b") && !two.isEjected("c")).toBe(true);
    expect(two.watchHeld(none, 0)).toBe(false);
    // A drained backend does not count: d drained, c is the last, held in: watched.
    expect(two.watchHeld(new Set(["d"]), 0)).toBe(true);
    expect(two.get("c").nextProbeAt).toBe(1000);
  });

  it("fitForRetry: a backend other than the failed one, not drained, not ejected, with no fault since its last success", () => {
    const t = tracker(["a", "b", "c"]);
    const none = new Set<string>();
    expect(t.fitForRetry(new Set(["a"]))).toBe(true);
    // b faulted once (far from `fall`): still usable, but suspect for a retry.
    t.fault("b", 0, 1);
    expect(t.anyUsable(none)).toBe(true);
    expect(t.fitForRetry(new Set(["a"]))).toBe(true); // c
    expect(t.fitForRetry(new Set(["c", "a"]))).toBe(false); // c drained: only b, suspect
    t.fault("c", 0, 2);
    expect(t.fitForRetry(new Set(["a"]))).toBe(false);
    // The failed backend itself never counts; a success clears b.
    expect(t.fitForRetry(none)).toBe(true); // a
    t.success("b", 3);
    expect(t.fitForRetry(new Set(["a"]))).toBe(true);
    // One backend: a retry has nowhere to go in the pool.
    expect(tracker(["solo"]).fitForRetry(new Set(["solo"]))).toBe(false);
  });

  it("restores on `rise` good probes, not on one; a failed probe doubles the delay up to 32x", () => {
    const t = tracker();
    for (let k = 0; k < 3; k++) t.fault("a", 0, 100);
    expect(t.due(1099)).toEqual([]);
    expect(t.due(1100)).toEqual(["a"]);
    expect(t.probed("a", false, 1100)).toBeNull();
    expect(t.get("a").nextProbeAt).toBe(1100 + 2000);
    t.probed("a", false, 3100);
    expect(t.get("a").nextProbeAt).toBe(3100 + 4000);
    for (let k = 0; k < 10; k++) t.probed("a", false, 10_000);
    expect(t.get("a").nextProbeAt).toBe(10_000 + 32_000);
    expect(t.probed("a", true, 50_000)).toBeNull();
    expect(t.isEjected("a")).toBe(true);
    // A good probe undoes the backoff: the next check comes one interval later.
    expect(t.get("a").nextProbeAt).toBe(51_000);
    expect(t.probed("a", true, 51_000)).toBe("restored");
    expect(t.isEjected("a")).toBe(false);
    expect(t.get("a").faults).toBe(0);
  });

  it("ignores outcomes of requests routed before the ejection (no flapping), counts those routed after", () => {
    const t = tracker();
    for (let k = 0; k < 3; k++) t.fault("a", 0, 500);
    // Streams that were already running finish fine: they say nothing about the backend now.
    for (let k = 0; k < 10; k++) expect(t.success("a", 400)).toBeNull();
    expect(t.isEjected("a")).toBe(true);
    // Fail-open traffic sent after the ejection: two good outcomes restore it; a fault restarts the streak.
    expect(t.success("a", 600)).toBeNull();
    expect(t.fault("a", 601, 700)).toBeNull();
    expect(t.get("a").goodChecks).toBe(0);
    expect(t.success("a", 800)).toBeNull();
    expect(t.success("a", 801)).toBe("restored");
  });

  it("persists only rows that differ from the default, and reloads them for backends still in the pool", () => {
    const t = tracker();
    t.fault("b", 0, 1);
    for (let k = 0; k < 3; k++) t.fault("c", 0, 2);
    const rows = t.rows();
    expect(rows.map((r) => r.id).sort()).toEqual(["b", "c"]);
    const u = tracker(["a", "c"]);
    u.load(rows);
    expect(u.isEjected("c")).toBe(true);
    expect(u.get("b").faults).toBe(0);
    u.reset("c");
    expect(u.isEjected("c")).toBe(false);
    u.setBackends(["a"]);
    expect(u.rows()).toEqual([]);
  });

  it("rejects bad settings with the field named", () => {
    expect(() => new HealthTracker({ ...SETTINGS, fall: 0 })).toThrow(/fall/);
    expect(() => new HealthTracker({ ...SETTINGS, rise: 1.5 })).toThrow(/rise/);
    expect(() => new HealthTracker({ ...SETTINGS, maxEjectionPercent: 101 })).toThrow(/maxEjectionPercent/);
    expect(() => new HealthTracker({ ...SETTINGS, probeIntervalMs: 0 })).toThrow(/probeIntervalMs/);
  });
});

/** Probes `id` good until it is back; returns when it came back. */
function probeBack(t: HealthTracker, id: string): number {
  for (let k = 0; k < 10; k++) {
    const at = t.get(id).nextProbeAt!;
    t.probed(id, true, at);
    if (t.get(id).nextProbeAt === null) return at;
  }
  throw new Error(`${id} never came back`);
}

describe("HealthTracker: a backend whose /health says 200 while its requests fail", () => {
  it("ejected again soon after good probes restored it: each relapse doubles the wait for its first probe, up to 32x", () => {
    const t = tracker(["a", "b", "c", "d"]);
    for (let k = 0; k < 3; k++) t.fault("a", 0, 0);
    expect(t.get("a").nextProbeAt).toBe(1000);
    let back = probeBack(t, "a");
    expect(back).toBe(2000);
    expect(t.isEjected("a")).toBe(false);
    expect(t.get("a")).toMatchObject({ faults: 0, relapses: 0, backAt: 2000 });
    // Its requests fail at once: each time it is back, `fall` faults eject it again, and it waits longer.
    const waits: number[] = [];
    for (let flap = 0; flap < 7; flap++) {
      const at = back + 100;
      for (let k = 0; k < 3; k++) t.fault("a", at, at);
      expect(t.isEjected("a")).toBe(true);
      waits.push(t.get("a").nextProbeAt! - at);
      expect(t.relapsesAt("a", at)).toBe(flap + 1);
      back = probeBack(t, "a");
    }
    expect(waits).toEqual([2000, 4000, 8000, 16_000, 32_000, 32_000, 32_000]);
    // A failed probe during a relapse's hold goes on doubling from there (capped).
    for (let k = 0; k < 3; k++) t.fault("a", back + 1, back + 1);
    t.probed("a", false, t.get("a").nextProbeAt!);
    expect(t.get("a").nextProbeAt! - (back + 1)).toBe(32_000 + 32_000);
  });

  it("forgets its relapses once it stays in rotation RELAPSE_WINDOW intervals; a clean ejection waits one interval", () => {
    const t = tracker(["a", "b"]);
    for (let k = 0; k < 3; k++) t.fault("a", 0, 0);
    let back = probeBack(t, "a");
    for (let k = 0; k < 3; k++) t.fault("a", back, back);
    back = probeBack(t, "a");
    expect(t.get("a").relapses).toBe(1);
    // Serving well long enough: the count is forgotten (read as of a time, and on the next success).
    const later = back + RELAPSE_WINDOW * 1000;
    expect(t.relapsesAt("a", later - 1)).toBe(1);
    expect(t.relapsesAt("a", later)).toBe(0);
    t.success("a", later);
    expect(t.rows()).toEqual([]);
    // Its next ejection is no relapse.
    for (let k = 0; k < 3; k++) t.fault("a", later + 5000, later + 5000);
    expect(t.get("a")).toMatchObject({ relapses: 0, nextProbeAt: later + 6000 });
  });

  it("a cell's last backend (watched, never ejected) backs off the same way, and a real recovery comes back within 32 intervals", () => {
    const none = new Set<string>();
    const solo = tracker(["solo"]);
    let now = 0;
    const waits: number[] = [];
    for (let flap = 0; flap < 7; flap++) {
      for (let k = 0; k < 3; k++) solo.fault("solo", now, now);
      expect(solo.watchHeld(none, now)).toBe(true);
      expect(solo.anyUsable(none)).toBe(false);
      waits.push(solo.get("solo").nextProbeAt! - now);
      now = probeBack(solo, "solo") + 50;
      expect(solo.failing("solo")).toBe(false);
    }
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 32_000]);
    expect(solo.relapsesAt("solo", now)).toBe(6);
    // It recovers for real at its next hold: back `rise` probes after the (capped) hold, no later.
    for (let k = 0; k < 3; k++) solo.fault("solo", now, now);
    solo.watchHeld(none, now);
    const cameBack = probeBack(solo, "solo");
    expect(cameBack - now).toBe(32_000 + 1000);
    expect(solo.anyUsable(none)).toBe(true);
  });

  it("reloads rows saved before relapses were counted as none", () => {
    const t = tracker(["a", "b"]);
    const old = {
      id: "a",
      ejected: true,
      faults: 3,
      goodChecks: 0,
      failedProbes: 0,
      ejectedAt: 0,
      nextProbeAt: 1000,
    };
    t.load([old as unknown as Parameters<HealthTracker["load"]>[0][number]]);
    expect(t.get("a")).toMatchObject({ ejected: true, relapses: 0, backAt: null });
    expect(probeBack(t, "a")).toBe(2000);
    expect(t.get("a")).toMatchObject({ relapses: 0, backAt: 2000 });
  });
});

describe("HealthTracker: probation of a backend back while it has relapses", () => {
  /** `a` ejected, back, ejected again within the window (a relapse) and back: on probation at the returned time. */
  function relapsedAndBack(t: HealthTracker): number {
    for (let k = 0; k < 3; k++) t.fault("a", 0, 0);
    let back = probeBack(t, "a");
    // Back for the first time (no relapse yet): no probation, `fall` faults as ever.
    expect(t.probationAt("a", back)).toBe(0);
    expect(t.fault("a", back + 100, back + 100)).toBeNull();
    expect(t.fault("a", back + 100, back + 100)).toBeNull();
    expect(t.fault("a", back + 100, back + 100)).toBe("ejected");
    back = probeBack(t, "a");
    expect(t.get("a").relapses).toBe(1);
    return back;
  }

  it("is held out again on its first fault, until `rise` good requests routed since it came back", () => {
    const t = tracker(["a", "b", "c", "d"]);
    let back = relapsedAndBack(t);
    expect(t.probationAt("a", back)).toBe(2);
    // Its /health lies: the first request after it came back fails, and that is enough.
    expect(t.fault("a", back + 100, back + 100)).toBe("ejected");
    expect(t.get("a")).toMatchObject({ relapses: 2, probation: 0 });
    expect(t.get("a").nextProbeAt! - (back + 100)).toBe(4000);
    // It recovers for real: two good requests end the probation; then `fall` faults again.
    back = probeBack(t, "a");
    expect(t.probationAt("a", back)).toBe(2);
    t.success("a", back + 10);
    expect(t.probationAt("a", back + 10)).toBe(1);
    t.success("a", back + 20);
    expect(t.probationAt("a", back + 20)).toBe(0);
    expect(t.fault("a", back + 30, back + 30)).toBeNull();
    expect(t.fault("a", back + 30, back + 30)).toBeNull();
    expect(t.isEjected("a")).toBe(false);
  });

  it("counts only requests routed since it came back, and ends with the relapse window", () => {
    const t = tracker(["a", "b", "c", "d"]);
    const back = relapsedAndBack(t);
    // A request routed before it came back (fail-open traffic while it was out) says nothing of it now.
    expect(t.fault("a", back - 1, back + 5)).toBeNull();
    t.success("a", back - 1);
    expect(t.probationAt("a", back + 5)).toBe(2);
    // In rotation RELAPSE_WINDOW intervals with no request: its relapses are forgotten, and its probation with them.
    const later = back + RELAPSE_WINDOW * 1000;
    expect(t.probationAt("a", later - 1)).toBe(2);
    expect(t.probationAt("a", later)).toBe(0);
    expect(t.fault("a", later, later)).toBeNull();
    expect(t.isEjected("a")).toBe(false);
  });

  it("never ejects past the cap: the backend it holds in is failing, as after `fall` faults", () => {
    const t = tracker(["a", "b"]);
    const back = relapsedAndBack(t);
    for (let k = 0; k < 3; k++) t.fault("b", back + 1, back + 1);
    expect(t.isEjected("b")).toBe(true);
    expect(t.fault("a", back + 100, back + 100)).toBeNull();
    expect(t.isEjected("a")).toBe(false);
    expect(t.failing("a")).toBe(true);
    expect(t.anyUsable(new Set())).toBe(false);
    // Its own success clears it, and pays one of its probation's.
    t.success("a", back + 200);
    expect(t.failing("a")).toBe(false);
    expect(t.probationAt("a", back + 200)).toBe(1);
  });

  it("a cell's last backend (watched, never ejected) is watched again on its first fault", () => {
    const none = new Set<string>();
    const solo = tracker(["solo"]);
    for (let k = 0; k < 3; k++) solo.fault("solo", 0, 0);
    solo.watchHeld(none, 0);
    let back = probeBack(solo, "solo");
    for (let k = 0; k < 3; k++) solo.fault("solo", back, back);
    solo.watchHeld(none, back);
    back = probeBack(solo, "solo");
    expect(solo.probationAt("solo", back)).toBe(2);
    expect(solo.fault("solo", back + 1, back + 1)).toBeNull();
    expect(solo.isEjected("solo")).toBe(false);
    expect(solo.failing("solo")).toBe(true);
    expect(solo.watchHeld(none, back + 1)).toBe(true);
    expect(solo.get("solo").relapses).toBe(2);
  });

  it("another tracker of the pool takes its word (onProbation → adoptProbation) and applies the same rule", () => {
    const t = tracker(["a", "b", "c", "d"]);
    const back = relapsedAndBack(t);
    const word = t.onProbation(back + 1);
    expect(word).toEqual([{ id: "a", relapses: 1, backAt: back, probation: 2 }]);
    // The Worker's fail-open tracker: no probes of its own, a fault of its own on `a` already.
    const local = tracker(["a", "b", "c", "d"]);
    local.fault("a", back - 5, back - 5);
    local.adoptProbation(word);
    expect(local.probationAt("a", back + 1)).toBe(2);
    expect(local.get("a").faults).toBe(1);
    // Of one return, the fewer owed: its own good request paid one, the pool's word still says 2.
    local.success("a", back + 2);
    local.adoptProbation(word);
    expect(local.probationAt("a", back + 3)).toBe(1);
    expect(local.fault("a", back + 3, back + 3)).toBe("ejected");
    // A backend it holds out is left alone; one the word no longer lists owes nothing.
    local.adoptProbation([{ id: "a", relapses: 3, backAt: back + 4, probation: 2 }]);
    expect(local.get("a")).toMatchObject({ ejected: true, relapses: 2, probation: 0 });
    const cleared = tracker(["a", "b", "c", "d"]);
    cleared.adoptProbation(word);
    cleared.adoptProbation([]);
    expect(cleared.probationAt("a", back + 1)).toBe(0);
    expect(cleared.fault("a", back + 1, back + 1)).toBeNull();
  });

  it("reloads rows saved before probation as on none", () => {
    const t = tracker(["a", "b"]);
    const { probation: _, ...saved } = { ...t.get("a"), faults: 1, relapses: 2, backAt: 5000 };
    t.load([saved as HealthRow]);
    expect(t.probationAt("a", 5001)).toBe(0);
    expect(t.fault("a", 5001, 5001)).toBeNull();
  });
});
