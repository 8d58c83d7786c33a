/**
 * A retry in a pool split in RouterDO cells, at the RouterDO of its cell: the backends it would meet there.
 * A backend a 429 (or a 503 with a retry-after) throttled is not fit for a movable retry while another cell may
 * take it (the cell answers no_usable, and the Worker asks another cell: router-client.ts movedRetry), and a
 * moved retry asked back of its own cell avoids every backend the request's attempts failed on, as
 * RouteInput.retryOf.tried does with one RouterDO.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { assignCells } from "../../src/routing/cells";
import { testPoolSpec } from "../../src/worker/router/pool-spec-fixture";
import type { RouteInput, RouteResult } from "../../src/worker/router/router-rpc";
import { authHeaders, BACKEND_KEY, faultServerUrl, gatewayWithEnv, interceptRoute } from "./helpers";

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

describe("a busy retry whose cell has nothing fit for it, through the Worker (ROUTER_CELLS = 2)", () => {
  it("is asked back of its own cell avoiding both backends tried: the dead one and the busy one", async () => {
    // dead, busy and fine in one cell (round_robin there: dead first, then busy), far alone in the other.
    const model = "retry-fit-cells";
    const backends = [
      { id: "dead", url: "http://127.0.0.1:1", weight: 1 },
      { id: "busy", url: `${faultServerUrl()}/busy429`, weight: 1 },
      { id: "fine", url: `${faultServerUrl()}/negotiate`, weight: 1 },
      { id: "far-2", url: `${faultServerUrl()}/_1/negotiate`, weight: 3 },
    ].map((b) => ({ ...b, models: [model], apiKey: BACKEND_KEY, kvCacheTokens: 65536 }));
    const cellOf = Array.from(assignCells(backends, 2));
    expect(cellOf).toEqual([1, 1, 1, 0]);
    const home = `${model} cell 2/2`;
    const backToCell: NonNullable<RouteInput["movedRetry"]>[] = [];
    const noUsable: RouteResult = { ok: false, code: "no_usable", message: "test: nothing usable" };
    const ROUTER = interceptRoute(async (input, real) => {
      // far's cell takes nothing: the request starts in the other cell, and a moved retry finds no cell to go to.
      if (input.cellLoads?.cell === 0) return noUsable;
      if (input.movedRetry !== undefined) backToCell.push(input.movedRetry);
      // The busy retry: its cell ends the busy lease and spends the budget (real); then, as a cell whose every
      // other backend is suspect would, it has nothing fit (its decision, on fine, is given back unused).
      if ((input.retryOf?.tried?.length ?? 0) > 0) {
        const res = (await real(input)) as RouteResult;
        if (res.ok) await env.ROUTER.getByName(home).complete(res.leaseId, { ok: true });
        return noUsable;
      }
      return real(input);
    });
    const res = await gatewayWithEnv(
      { BACKENDS: JSON.stringify(backends), ROUTER_CELLS: "2", ROUTING_POLICY: "round_robin", ROUTER },
      "/v1/chat/completions",
      {
        method: "POST",
        headers: authHeaders(),
        body: JSON.stringify({ model, max_tokens: 8, messages: [{ role: "user", content: "hi" }] }),
      },
    );
    // Before: movedRetry carried only `avoid: "busy"`, so dead was a candidate again (here round_robin happened to
    // pick fine, and the client got its 200 either way: the RouterDO test above shows the tried one being picked).
    expect(backToCell).toEqual([{ avoid: "busy", tried: ["dead"] }]);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-prefix-gateway-backend")).toBe("fine");
  });
});
