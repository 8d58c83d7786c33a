/**
 * Five (or more) concurrent failures on one backend, under load: it starts
 * to hang every new request (its /health stays fine), so the requests the
 * gateway sends it pile up — as many as the bounded-load cap lets in — and
 * are all given up at the connect deadline (10 s) within about a second of
 * each other, then retried elsewhere. It must be ejected once, its first
 * probe due one interval later (HEALTH_PROBE_SECONDS; the faults that arrive
 * after the ejection say nothing new and must not push it back), and it
 * must be restored once it answers again, without flapping.
 */
import { round, waitFor } from "../measure";
import { firstWhen, type Scenario } from "../scenario";

const HELD = 5;

export const concurrentFailures: Scenario = {
  id: "concurrent-failures",
  fault: "5 concurrent failures on one backend",
  asFiled: "next probe 160 s away; ejection flapped under load",
  async run(ctx) {
    const { rig } = ctx;
    const x = rig.emulators[0]!;
    const id = rig.ids[0]!;
    const before = x.state().stats;
    let heldMax = 0;
    const heldNow = () => {
      const n = x.state().stats.held;
      heldMax = Math.max(heldMax, n);
      return n;
    };
    x.setFault({ kind: "hang" });
    ctx.mark("fault");
    const t0 = ctx.clock.now();
    await waitFor(() => heldNow() >= HELD, 15_000, 50);
    const ejected = async () => (await rig.backendStats(id))?.healthy === false;
    // Every held request must have been given up (by its deadline) before the fault is lifted: lifting it would serve them.
    await waitFor(async () => heldNow() === 0 && (await ejected()), 40_000, 100);
    const failures = x.state().stats.faulted.hang - before.faulted.hang;
    x.setFault(null);
    const ejectedAt = firstWhen(ctx.samples, t0, id, (b) => !b.healthy);
    const restoredAfter = await waitFor(
      async () => (await rig.backendStats(id))?.healthy === true,
      90_000,
      250,
    );
    await ctx.sleep(10_000);
    ctx.mark("clear");
    let transitions = 0;
    let probeAheadMaxS = 0;
    let prev = true;
    for (const s of ctx.samples.filter((y) => y.tMs >= t0)) {
      const b = s.backends?.find((y) => y.id === id);
      if (b === undefined) continue;
      if (b.healthy !== prev) transitions++;
      prev = b.healthy;
      if (!b.healthy && b.nextProbeAt !== undefined)
        probeAheadMaxS = Math.max(probeAheadMaxS, (b.nextProbeAt - s.at) / 1000);
    }
    const firstProbe = ejectedAt?.backends?.find((b) => b.id === id)?.nextProbeAt;
    const firstProbeS = firstProbe === undefined ? null : round((firstProbe - ejectedAt!.at) / 1000, 1);
    const ejectedS = ejectedAt === undefined ? null : round((ejectedAt.tMs - t0) / 1000, 1);
    const lastEjected = [...ctx.samples]
      .reverse()
      .find((s) => s.backends?.some((b) => b.id === id && !b.healthy));
    const ejectedForS =
      ejectedAt === undefined || lastEjected === undefined
        ? null
        : round((lastEjected.tMs - ejectedAt.tMs) / 1000, 1);
    return {
      now:
        `${heldMax} requests held at once, ${failures} failed in all; ejected ${ejectedS ?? "—"} s after the fault began, ` +
        `first probe due ${firstProbeS ?? "—"} s later (the furthest probe ever scheduled: ${round(probeAheadMaxS, 1)} s ahead); ` +
        `${restoredAfter === undefined ? "not restored within 90 s" : `restored, out for ${ejectedForS} s`}; ` +
        `${transitions} health transitions (2 = one ejection, one restoration)`,
      figures: {
        heldAtOnceMax: heldMax,
        failuresOnIt: failures,
        secondsToEject: ejectedS,
        firstProbeSecondsAfterEjection: firstProbeS,
        furthestProbeScheduledSecondsAhead: round(probeAheadMaxS, 1),
        secondsEjected: ejectedForS,
        healthTransitions: transitions,
      },
    };
  },
};
