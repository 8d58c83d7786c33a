/**
 * A backend id whose URL changes: emu-4's process dies and the gateway
 * ejects it; then BACKENDS is changed so that emu-4 points at a new, healthy
 * server, and the gateway restarts with the RouterDO's storage kept (a
 * changed secret is a new deploy; the pool's fleet and health persist). A
 * restart with the URL unchanged comes first, as the control: emu-4 must
 * still be ejected there (health did persist). With the new URL, emu-4 is
 * a different server: it must start clean and take its share of traffic.
 *
 * With RouterDO cells (--cells), each cell learns the new fleet on its own
 * first route call: until a request reaches emu-4's cell, that cell (and
 * /healthz) still holds the old fleet's health. So "the first request" is
 * the first one served in emu-4's cell — with one RouterDO, the first
 * request, as before.
 */

import { round, waitFor } from "../measure";
import { backendEntry } from "../rig";
import type { Scenario } from "../scenario";

const OBSERVE_MS = 15_000;

export const movedBackend: Scenario = {
  id: "moved-backend",
  fault: "health of a backend id whose URL changed",
  asFiled: "stayed ejected with its old failure count",
  emulators: 5,
  // emu-1..4 on the first four emulators; the fifth is emu-4's new home.
  entries: (urls) => urls.slice(0, 4).map((u, i) => backendEntry(`emu-${i + 1}`, u)),
  async run(ctx) {
    const { rig } = ctx;
    const [e1, e2, e3, e4, e5] = rig.emulators;
    const entry = (url: string) =>
      [e1!, e2!, e3!].map((e, i) => backendEntry(`emu-${i + 1}`, e.url)).concat(backendEntry("emu-4", url));
    const emu4 = () => rig.backendStats("emu-4");
    // emu-4's cell (the whole pool with one RouterDO); cells split backends by id, so a new URL keeps it.
    const members = await rig.cellMembers();
    const cellOf4 = members?.map((c) => c.split(" ")).find((c) => c.includes("emu-4")) ?? rig.ids;
    await e4!.stop();
    const ejectMs = await waitFor(async () => (await emu4())?.healthy === false, 60_000, 250);
    const atEjection = await emu4();
    await ctx.stopTraffic();
    await rig.restartGateway(entry(e4!.url));
    const control = await emu4();
    await rig.restartGateway(entry(e5!.url));
    ctx.mark("fault");
    const t0 = ctx.clock.now();
    // The RouterDO (emu-4's cell's) learns the new fleet on its first route call.
    let toItsCell = 0;
    for (let i = 0; i < 32; i++) {
      toItsCell++;
      const r = await ctx.send({ id: i === 0 ? "moved-first-request" : `moved-first-request-${i}` });
      if (r.backend !== undefined && cellOf4.includes(r.backend)) break;
    }
    const first = await emu4();
    ctx.startTraffic(20);
    await ctx.sleep(OBSERVE_MS);
    const end = await emu4();
    ctx.mark("clear");
    const after = ctx.ordinary().filter((r) => r.startMs >= t0);
    const served = after.filter((r) => r.backend === "emu-4").length;
    const row = (b: typeof first) =>
      b === undefined
        ? "unknown"
        : `${b.healthy ? "in rotation" : "ejected"}, ${b.consecutiveFailures} faults`;
    return {
      now:
        `ejected when its old server died (${row(atEjection)}); after a restart with the same URL still ${row(control)} (control); ` +
        `with the new URL: ${row(first)} from the first request${toItsCell > 1 ? ` to its cell (after ${toItsCell - 1} to other cells)` : ""}, ${served} of ${after.length} requests served by it in ${OBSERVE_MS / 1000} s`,
      figures: {
        secondsToEjectOldServer: round((ejectMs ?? Number.NaN) / 1000, 1),
        faultsAtEjection: atEjection?.consecutiveFailures ?? null,
        controlSameUrlHealthy: control?.healthy ?? null,
        controlSameUrlFaults: control?.consecutiveFailures ?? null,
        ...(toItsCell > 1 ? { requestsUntilOneInItsCell: toItsCell } : {}),
        newUrlHealthyAtFirstRequest: first?.healthy ?? null,
        newUrlFaultsAtFirstRequest: first?.consecutiveFailures ?? null,
        newUrlHealthyAtEnd: end?.healthy ?? null,
        requestsServedByItAfterMove: served,
        requestsAfterMove: after.length,
      },
    };
  },
};
