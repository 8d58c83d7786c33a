/**
 * A backend that dies with streams in flight: its process is killed
 * (connections destroyed mid-body, new ones refused) and restarted 3 s
 * later, with 20 ordinary streams running. Each cut stream must end with an
 * SSE error event, never a silent truncation, and be reported to the
 * RouterDO as a failure (its log line says stream_error).
 */
import { readGatewayLog } from "../gateway-log";
import { round } from "../measure";
import { firstWhen, type Scenario } from "../scenario";
import { inFlightAtKill } from "../soak-verdict";

const DOWN_MS = 3000;
const WATCH_MS = 25_000;

export const cut: Scenario = {
  id: "cut",
  fault: "a stream cut mid-way by a dying backend",
  asFiled: "raw TCP cut, no SSE error event; reported as success",
  async run(ctx) {
    const { rig } = ctx;
    const a = rig.emulators[0]!;
    const id = rig.ids[0]!;
    const inflight = (await rig.backendStats(id))?.inflight ?? null;
    ctx.mark("fault");
    const kill = { backend: id, atMs: ctx.clock.now() };
    await a.stop();
    await ctx.sleep(DOWN_MS);
    await a.start();
    await ctx.sleep(WATCH_MS);
    ctx.mark("clear");
    const cutStreams = ctx.ordinary().filter((r) => inFlightAtKill(r, [kill]));
    const lines = await readGatewayLog(rig.gateway.logFile);
    const reportedFailed = cutStreams.filter((r) => lines.get(r.id)?.failure === "stream_error").length;
    const errorEvents = cutStreams.filter((r) => r.ending === "error_event").length;
    const broken = cutStreams.filter((r) => r.ending === "broken").length;
    // A stream whose first event had not come when its backend died is retried elsewhere and ends whole.
    const done = cutStreams.filter((r) => r.ending === "done").length;
    const ejected = firstWhen(ctx.samples, kill.atMs, id, (b) => !b.healthy);
    return {
      now:
        `${cutStreams.length} streams cut: ${errorEvents} ended with an SSE error event, ${done} with [DONE], ${broken} broken; ` +
        `${reportedFailed} logged as stream_error failures; backend ${ejected === undefined ? "not ejected" : `ejected after ${round((ejected.tMs - kill.atMs) / 1000, 1)} s`}`,
      figures: {
        inflightOnItAtKill: inflight,
        cutStreams: cutStreams.length,
        cutWithErrorEvent: errorEvents,
        cutBroken: broken,
        cutDone: done,
        cutLoggedAsStreamError: reportedFailed,
        secondsToEject: ejected === undefined ? null : round((ejected.tMs - kill.atMs) / 1000, 1),
      },
    };
  },
};
