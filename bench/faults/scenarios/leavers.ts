/**
 * Clients that leave before the response headers: 50 streamed requests
 * (long prompts of their own, abandoned 50 ms after sending, while the
 * backend is still in prefill: the gateway sends headers only with the
 * first event), then 50 non-streamed ones (abandoned after 300 ms of a
 * 256-token answer, whose headers come with the whole body) — with 20
 * ordinary streams running. The backends must stop computing them, and
 * their leases must end at once.
 */

import { segmentText } from "../../../sim/workloads/segment-text";
import type { RequestRecord } from "../clients";
import { MODEL } from "../rig";
import type { Scenario, ScenarioContext } from "../scenario";

const EACH = 50;

function leaverBody(i: number, stream: boolean): string {
  return JSON.stringify({
    model: MODEL,
    stream,
    max_tokens: stream ? 64 : 256,
    messages: [{ role: "user", content: segmentText({ key: `faults/leaver/${stream}/${i}`, tokens: 4096 }) }],
  });
}

function leave(ctx: ScenarioContext, i: number, stream: boolean, afterMs: number): Promise<RequestRecord> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), afterMs);
  return ctx
    .send({ body: leaverBody(i, stream), id: `leaver-${stream ? "s" : "j"}-${i}`, signal: abort.signal })
    .finally(() => clearTimeout(timer));
}

function cancelledSoFar(ctx: ScenarioContext): number {
  return ctx.rig.emulators.reduce((n, e) => n + e.state().stats.cancelled, 0);
}

/** Requests whose first token the backend produced (prefill computed), by the emulators' own timings. */
function reachedFirstToken(ctx: ScenarioContext, records: readonly RequestRecord[]): number {
  return records.filter((r) => ctx.rig.emulators.some((e) => e.serverTtftMs(r.id) !== undefined)).length;
}

/** RouterDO leases beyond the ordinary streams in flight. */
async function lingering(ctx: ScenarioContext): Promise<number | null> {
  const s = await ctx.rig.poolStats();
  return s === undefined ? null : Math.max(0, s.leases - ctx.inflight());
}

interface Group {
  readonly records: readonly RequestRecord[];
  readonly cancelled: number;
  readonly lingering1s: number | null;
  readonly lingering5s: number | null;
}

/** A burst of EACH leavers, then what the backends and the RouterDO did about them. */
async function group(ctx: ScenarioContext, stream: boolean, afterMs: number): Promise<Group> {
  const before = cancelledSoFar(ctx);
  const records = await Promise.all(Array.from({ length: EACH }, (_, i) => leave(ctx, i, stream, afterMs)));
  await ctx.sleep(1000);
  const lingering1s = await lingering(ctx);
  await ctx.sleep(4000);
  const lingering5s = await lingering(ctx);
  return { records, cancelled: cancelledSoFar(ctx) - before, lingering1s, lingering5s };
}

export const leavers: Scenario = {
  id: "leavers",
  fault: "clients that leave before response headers (50 streams, then 50 non-streaming)",
  asFiled: "backends computed every abandoned request; leases lingered 30 s+",
  async run(ctx) {
    ctx.mark("fault");
    const s = await group(ctx, true, 50);
    const j = await group(ctx, false, 300);
    ctx.mark("clear");
    const early = (g: Group) => g.records.filter((r) => r.status === 0).length;
    const prefilled = reachedFirstToken(ctx, s.records);
    return {
      now:
        `streamed: ${early(s)} of ${EACH} left before headers; the backends cancelled ${s.cancelled}, ` +
        `${prefilled} of them only after computing the prefill; leases beyond ordinary streams ${s.lingering1s} after 1 s. ` +
        `Non-streamed: ${early(j)} left before headers; the backends cancelled ${j.cancelled} (computed the rest to the end); ` +
        `leases beyond ordinary streams ${j.lingering1s} after 1 s, ${j.lingering5s} after 5 s`,
      figures: {
        streamedLeftBeforeHeaders: early(s),
        streamedCancelledByBackends: s.cancelled,
        streamedPrefillComputed: prefilled,
        streamedLeasesLingering1s: s.lingering1s,
        streamedLeasesLingering5s: s.lingering5s,
        jsonLeftBeforeHeaders: early(j),
        jsonCancelledByBackends: j.cancelled,
        jsonLeasesLingering1s: j.lingering1s,
        jsonLeasesLingering5s: j.lingering5s,
      },
    };
  },
};
