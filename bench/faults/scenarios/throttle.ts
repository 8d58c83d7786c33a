/**
 * One backend answering every request with 429 (retry-after 2 s) for 30 s,
 * with 20 ordinary streams running: its requests must be retried elsewhere,
 * it must be kept out for its retry-after (a throttle, not an ejection), and
 * a 429 reaches a client only when nobody can serve — with its retry-after.
 */
import { round } from "../measure";
import type { Scenario } from "../scenario";

const THROTTLE_MS = 30_000;
const RETRY_AFTER_S = 2;

export const throttle: Scenario = {
  id: "throttle",
  fault: "one backend answering 429",
  asFiled: "42.6% of all requests got 429, retry-after dropped",
  async run(ctx) {
    const { rig } = ctx;
    const b = rig.emulators[1]!;
    const id = rig.ids[1]!;
    const before = b.state().stats.faulted.status;
    b.setFault({ kind: "status", status: 429, retryAfterSeconds: RETRY_AFTER_S });
    ctx.mark("fault");
    const t0 = ctx.clock.now();
    await ctx.sleep(THROTTLE_MS);
    b.setFault(null);
    ctx.mark("clear");
    const t1 = ctx.clock.now();
    const sent429 = b.state().stats.faulted.status - before;
    const during = ctx.ordinary().filter((r) => r.startMs >= t0 && r.startMs < t1);
    const got429 = during.filter((r) => r.status === 429);
    const withRetryAfter = got429.filter((r) => r.retryAfter !== undefined).length;
    const samples = ctx.samples.filter((s) => s.tMs >= t0 && s.tMs < t1 && s.backends !== undefined);
    const throttled = samples.filter((s) => s.backends!.some((x) => x.id === id && x.throttled)).length;
    const ejected = samples.some((s) => s.backends!.some((x) => x.id === id && !x.healthy));
    const share = during.length === 0 ? Number.NaN : (100 * got429.length) / during.length;
    return {
      now:
        `${round(share, 1)}% of requests during the fault got 429 (${got429.length} of ${during.length}` +
        `${got429.length > 0 ? `, ${withRetryAfter} with retry-after` : ""}); ` +
        `the backend sent ${sent429} 429s, was throttled in ${round((100 * throttled) / Math.max(1, samples.length))}% of samples, ${ejected ? "and was ejected" : "never ejected"}`,
      figures: {
        answers429ByTheBackend: sent429,
        requestsDuringFault: during.length,
        clientsGot429: got429.length,
        clientsGot429Percent: round(share, 2),
        clients429WithRetryAfter: withRetryAfter,
        samplesThrottledPercent: round((100 * throttled) / Math.max(1, samples.length), 1),
        ejected,
      },
    };
  },
};
