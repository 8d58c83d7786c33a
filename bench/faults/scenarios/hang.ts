/**
 * A backend that stops answering (SIGSTOP-like): it accepts connections and
 * reads requests but never answers, /health included, for 30 s, with 20
 * ordinary streams running. Its requests must be given up at the connect
 * deadline and retried elsewhere, the backend ejected, and it must come back
 * once it answers again.
 *
 * The emulator's `hang` holds new requests only; streams it was already
 * sending keep going (a real SIGSTOP would freeze them too, and the idle
 * deadline would end them with an error event — the workerd tests cover a
 * stalled stream).
 */
import { round, waitFor } from "../measure";
import { firstWhen, type Scenario } from "../scenario";

const HANG_MS = 30_000;

export const hang: Scenario = {
  id: "hang",
  fault: "a backend stopped (SIGSTOP-like: accepts, never answers; emulator `hang` incl. /health) for 30 s",
  asFiled: "its 6 in-flight streams froze 30 s; never marked unhealthy; leases held until 600 s TTL",
  async run(ctx) {
    const { rig } = ctx;
    const a = rig.emulators[0]!;
    const id = rig.ids[0]!;
    const inflight = (await rig.backendStats(id))?.inflight ?? null;
    const before = a.state().stats;
    a.setFault({ kind: "hang", health: "follow" });
    ctx.mark("fault");
    const t0 = ctx.clock.now();
    await ctx.sleep(HANG_MS);
    const during = a.state().stats;
    a.setFault(null);
    ctx.mark("clear");
    const restoreMs = await waitFor(async () => (await rig.backendStats(id))?.healthy === true, 60_000, 250);
    const ejected = firstWhen(ctx.samples, t0, id, (b) => !b.healthy);
    const held = during.faulted.hang - before.faulted.hang;
    const ejectS = ejected === undefined ? null : round((ejected.tMs - t0) / 1000, 1);
    return {
      now:
        `${held} requests sent to it while hung were given up at the 10 s connect deadline and retried; ` +
        `ejected after ${ejectS ?? "—"} s; back in rotation ${restoreMs === undefined ? "not within 60 s" : `${round(restoreMs / 1000, 1)} s`} after it answered again`,
      figures: {
        inflightOnItAtFault: inflight,
        requestsHeldByTheHungBackend: held,
        abandonedByTheGateway: during.abandoned - before.abandoned,
        secondsToEject: ejectS,
        secondsToRestoreAfterRecovery: round((restoreMs ?? Number.NaN) / 1000, 1),
      },
    };
  },
};
