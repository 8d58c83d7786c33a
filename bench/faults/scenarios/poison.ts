/**
 * A poison prompt: every backend answers it with a 500. Sent 4 times within
 * 100 ms on an otherwise idle gateway (as an SDK retrying it would), then 10
 * ordinary requests one by one; then the same burst again with 20 ordinary
 * streams running. A request that fails everywhere must cost nobody else
 * their answer and eject no backend.
 */
import { MODEL } from "../rig";
import type { Scenario } from "../scenario";

const MARKER = "POISON-PILL-4117";

function poisonBody(tag: string): string {
  return JSON.stringify({
    model: MODEL,
    stream: true,
    max_tokens: 16,
    messages: [{ role: "user", content: `${tag}: please ${MARKER}` }],
  });
}

export const poison: Scenario = {
  id: "poison",
  fault: "a prompt that makes every backend answer 500, sent 4 times within 100 ms at light load",
  asFiled: "all four backends ejected; next 10 ordinary requests got 503",
  background: 0,
  async run(ctx) {
    const { rig } = ctx;
    for (const e of rig.emulators) e.setFault({ kind: "status", status: 500, match: MARKER });
    const burst = (tag: string) =>
      Promise.all(
        [0, 25, 50, 75].map(async (delay, i) => {
          await ctx.sleep(delay);
          return ctx.send({ body: poisonBody(tag), id: `poison-${tag}-${i}` });
        }),
      );
    ctx.mark("fault");
    const light = await burst("light");
    await ctx.sleep(500);
    const afterLight = await rig.poolStats();
    const next: number[] = [];
    for (let i = 0; i < 10; i++) next.push((await ctx.send({ id: `poison-next-${i}` })).status);
    ctx.startTraffic(20);
    await ctx.sleep(5000);
    const loaded = await burst("loaded");
    await ctx.sleep(5000);
    const afterLoaded = await rig.poolStats();
    for (const e of rig.emulators) e.setFault(null);
    ctx.mark("clear");
    const unhealthy = (s: typeof afterLight) => s?.backends.filter((b) => !b.healthy).length ?? null;
    const served500 = rig.emulators.reduce((n, e) => n + e.state().stats.faulted.status, 0);
    const nextOk = next.filter((s) => s === 200).length;
    return {
      now:
        `the 4 poison requests got ${[...new Set(light.map((r) => r.status))].join("/")}; ` +
        `${unhealthy(afterLight)} backends ejected; next 10 ordinary requests: ${nextOk}×200` +
        (nextOk < 10 ? ` (others ${next.filter((s) => s !== 200).join(",")})` : "") +
        `; the same burst under 20 streams: ${unhealthy(afterLoaded)} ejected`,
      figures: {
        poisonStatusesLight: light.map((r) => r.status).join(","),
        poisonStatusesLoaded: loaded.map((r) => r.status).join(","),
        backendsEjectedAfterLight: unhealthy(afterLight),
        backendsEjectedAfterLoaded: unhealthy(afterLoaded),
        next10Statuses: next.join(","),
        answers500ByBackends: served500,
      },
    };
  },
};
