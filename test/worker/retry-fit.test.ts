/**
 * A retry in a pool split in RouterDO cells, at the RouterDO of its cell: the backends it would meet there.
 * A backend a 429 (or a 503 with a retry-after) throttled is not fit for a movable retry while another cell may
 * take it (the cell answers no_usable, and the Worker asks another cell: router-client.ts movedRetry), and a
 * moved retry asked back of its own cell avoids every backend the request's attempts failed on, as
 * RouteInput.retryOf.tried does with one RouterDO.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { testPoolSpec } from "../../src/worker/router/pool-spec-fixture";

// Never fetched: the RouterDO is asked directly, and no probe runs while nothing is ejected.
const spec = (...ids: string[]) =>
  testPoolSpec(
    ids.map((id, i) => ({ id, url: `http://127.0.0.1:${9 + i}` })),
    { policy: "round_robin" },
  );

describe("a movable retry at its cell's RouterDO", () => {
  it("is answered no_usable when the cell's only other backend is throttled (not routed back onto the failed one)", async () => {
    const stub = env.ROUTER.getByName("retry-fit throttled");
    const s = spec("thr-a", "thr-b");
    const base = { fleetVersion: "retry-fit-1", spec: s, promptTokens: 16, clientKey: "00000000000000aa" };
    // One lease on each backend (round_robin alternates).
    const first = await stub.route({ ...base, blocks: [11] });
    const second = await stub.route({ ...base, blocks: [12] });
    if (!first.ok || !second.ok) throw new Error("not routed");
    expect(second.backendId).not.toBe(first.backendId);
    // The second backend answers 429 with a 30 s retry-after: the router marks it throttled.
    await stub.complete(second.leaseId, { ok: false, failure: "throttled", retryAfterMs: 30_000 });
    // The first backend's connection was refused: its retry, which the Worker may move to another cell.
    const retry = await stub.route({
      ...base,
      blocks: [11],
      movable: true,
      retryOf: { leaseId: first.leaseId, failure: "connect_error" },
    });
    // Before: `ok`, routed back onto the refused backend (the throttled one left out, nothing else here).
    expect(retry.ok ? retry.backendId : retry.code).toBe("no_usable");
    const st = await stub.stats();
    if (!st.ok) throw new Error(st.message);
    expect(st.leases).toBe(0);
    expect(st.usage.retried).toBe(1);
  });

  it("a moved retry asked back of its own cell avoids both backends its attempts failed on", async () => {
    const stub = env.ROUTER.getByName("retry-fit moved back");
    const s = spec("mv-a", "mv-b", "mv-c");
    const base = { fleetVersion: "retry-fit-2", spec: s, promptTokens: 16, clientKey: "00000000000000bb" };
    const seen: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await stub.route({
        ...base,
        blocks: [100 + i],
        movedRetry: { avoid: "mv-a", tried: ["mv-b"] },
      });
      if (!r.ok) throw new Error(r.message);
      seen.push(r.backendId);
      await stub.complete(r.leaseId, { ok: true });
    }
    // Before: round_robin between mv-b and mv-c (only `avoid` was left out).
    expect(seen).toEqual(seen.map(() => "mv-c"));
  });
});
