/**
 * A pool split into RouterDO cells (ROUTER_CELLS), through the real Worker
 * and RouterDOs against real emulators: each cell's object routes over its
 * own backends only, every request is decided and completed in one of them,
 * the admin's reads merge the cells and its drain reaches the owning cell.
 * (With one cell the pool is the single RouterDO named by its model: every
 * other workerd test runs that way, under ROUTER_CELLS = auto.)
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CELL_RELAY_FAMILIES } from "../../src/routing/defaults";
import { testPoolSpec } from "../../src/worker/router/pool-spec-fixture";
import type { RouteResult } from "../../src/worker/router/router-rpc";
import {
  ADMIN_TOKEN,
  authHeaders,
  backendRow,
  chatBody,
  faultServerUrl,
  gatewayWithEnv,
  interceptRoute,
  longPrompt,
  SPARE_MODEL,
  spareCellsEnv,
  spareUrls,
} from "./helpers";

const IDS = ["cell-a", "cell-b", "cell-c", "cell-d"];

/** The spare-model pool as four backends (one per spare emulator) in two cells. */
const cellsEnv = () => spareCellsEnv(IDS);

const cellNames = [`${SPARE_MODEL} cell 1/2`, `${SPARE_MODEL} cell 2/2`];

async function cellStats(name: string) {
  const s = await env.ROUTER.getByName(name).stats();
  if (!s.ok) throw new Error(`${name}: ${s.message}`);
  return s;
}

function send(seed: string): Promise<Response> {
  const body = JSON.parse(chatBody(longPrompt(seed), "q")) as Record<string, unknown>;
  return gatewayWithEnv(cellsEnv(), "/v1/chat/completions", {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify({ ...body, model: SPARE_MODEL }),
  });
}

describe("ROUTER_CELLS = 2", () => {
  it("each cell's RouterDO owns a disjoint half of the pool and decides the requests sent to it", async () => {
    const served: string[] = [];
    for (let i = 0; i < 24; i++) {
      const res = await send(`cells-${i}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-prefix-gateway-route")).not.toBe("local");
      served.push(res.headers.get("x-prefix-gateway-backend")!);
    }
    const [one, two] = await Promise.all(cellNames.map(cellStats));
    const ids = (s: typeof one) => s!.backends.map((b) => b.id);
    expect(ids(one!).length).toBe(2);
    expect(ids(two!).length).toBe(2);
    expect([...ids(one!), ...ids(two!)].sort()).toEqual(IDS);
    // Every request was completed in a cell, none twice; both cells got some (24 distinct prompts).
    expect(one!.usage.completed + two!.usage.completed).toBe(24);
    expect(one!.usage.completed).toBeGreaterThan(0);
    expect(two!.usage.completed).toBeGreaterThan(0);
    expect(one!.leases + two!.leases).toBe(0);
    // Each request was served by a backend of the cell that decided it: the counts agree per cell.
    const count = (s: typeof one) => served.filter((b) => ids(s!).includes(b)).length;
    expect(count(one!)).toBe(one!.usage.completed);
    // The pool's single RouterDO (K = 1's name) was never asked.
    expect((await env.ROUTER.getByName(SPARE_MODEL).stats()).ok).toBe(false);
  });

  it("the admin's stats merge the cells; a drain reaches the cell that owns the backend", async () => {
    await send("cells-admin");
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const stats = await gatewayWithEnv(cellsEnv(), "/admin/stats", { headers: admin });
    expect(stats.status).toBe(200);
    const body = (await stats.json()) as {
      pools: Record<string, { ok: boolean; backends: { id: string }[] }>;
    };
    expect(body.pools[SPARE_MODEL]!.backends.map((b) => b.id).sort()).toEqual(IDS);

    const drain = await gatewayWithEnv(cellsEnv(), "/admin/backends/cell-c/drain", {
      method: "POST",
      headers: admin,
    });
    expect(drain.status).toBe(200);
    expect(await drain.json()).toMatchObject({ pools: { [SPARE_MODEL]: { drained: ["cell-c"] } } });
    const cells = await Promise.all(cellNames.map(cellStats));
    const owner = cells.find((s) => s.backends.some((b) => b.id === "cell-c"))!;
    expect(owner.router.backends.find((b) => b.id === "cell-c")!.drained).toBe(true);
    // The other cell never heard of it.
    const other = cells.find((s) => s !== owner)!;
    expect(other.router.backends.some((b) => b.id === "cell-c" || b.drained)).toBe(false);
    const health = await gatewayWithEnv(cellsEnv(), "/healthz", { headers: admin });
    const h = (await health.json()) as {
      pools: Record<string, { ok: boolean; cells?: Record<string, unknown> }>;
    };
    expect(Object.keys(h.pools[SPARE_MODEL]!.cells!).sort()).toEqual(cellNames);
    const undrain = await gatewayWithEnv(cellsEnv(), "/admin/backends/cell-c/undrain", {
      method: "POST",
      headers: admin,
    });
    expect(undrain.status).toBe(200);
  });

  it("a drain may empty its cell while another cell has a backend in rotation; the pool's last is refused, and undone in the pools it reached", async () => {
    // drain-a: 4 backends, 2 cells of 2; drain-b: 2 backends, 2 cells of 1. dual serves both, drain-a first.
    const urls = spareUrls();
    const backend = (id: string, models: string[], i: number) =>
      backendRow(id, urls[i % urls.length]!, models);
    // dual answers any model (the spare emulators serve spare-model only): the requests below reach it.
    const twoPools = {
      BACKENDS: JSON.stringify([
        { ...backend("dual", ["drain-a", "drain-b"], 0), url: `${faultServerUrl()}/echo` },
        backend("a-2", ["drain-a"], 1),
        backend("a-3", ["drain-a"], 2),
        backend("a-4", ["drain-a"], 3),
        backend("b-2", ["drain-b"], 1),
      ]),
      ROUTER_CELLS: "2",
    };
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    // b-2 is its cell's only backend: draining it empties the cell, and dual, in the other cell, takes the
    // pool's requests (before: 409, "would leave its cell no backend in rotation").
    const first = await gatewayWithEnv(twoPools, "/admin/backends/b-2/drain", {
      method: "POST",
      headers: admin,
    });
    expect(first.status).toBe(200);
    for (let i = 0; i < 6; i++) {
      const body = JSON.parse(chatBody(longPrompt(`drained-cell-${i}`), "q")) as Record<string, unknown>;
      const r = await gatewayWithEnv(twoPools, "/v1/chat/completions", {
        method: "POST",
        headers: authHeaders(),
        // Streamed: dual's /echo answers an event stream, which a non-streamed request now counts as a failed
        // attempt (upstream.ts formMismatch).
        body: JSON.stringify({ ...body, model: "drain-b", stream: true }),
      });
      expect(r.status).toBe(200);
      expect(r.headers.get("x-prefix-gateway-backend")).toBe("dual");
    }
    // Draining dual would leave drain-b none in any cell: refused, and undone in drain-a, which took it.
    const res = await gatewayWithEnv(twoPools, "/admin/backends/dual/drain", {
      method: "POST",
      headers: admin,
    });
    expect(res.status).toBe(409);
    const list = await gatewayWithEnv(twoPools, "/admin/backends", { headers: admin });
    const { backends } = (await list.json()) as {
      backends: { id: string; pools: Record<string, { drained: boolean } | null> }[];
    };
    expect(backends.find((b) => b.id === "dual")!.pools["drain-a"]).toMatchObject({ drained: false });
    const { error } = (await res.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("last_backend");
    expect(error.message).toMatch(
      /pool 'drain-b': draining it would leave the pool no backend in rotation in any of its 2 RouterDO cells \(ROUTER_CELLS\): undrain one of b-2 first/,
    );
    expect(error.message).toMatch(/Nothing was changed \(undone in pool 'drain-a'\)/);
    const undrain = await gatewayWithEnv(twoPools, "/admin/backends/b-2/undrain", {
      method: "POST",
      headers: admin,
    });
    expect(undrain.status).toBe(200);
  });

  // Each drain reads the other cells' snapshots before it lands: two at once, each the last backend in rotation
  // of its cell, each saw the other in rotation and both were granted (main: 200, 200; the pool had no backend in
  // rotation, every cell failing open onto its drained ones). A pool's drains now take a lock its first cell's
  // RouterDO holds, so the second reads the first's result: one is drained, the other refused, whatever the order.
  it("two drains at once in two cells never leave the pool no backend in rotation", async () => {
    const urls = spareUrls();
    const pool = {
      BACKENDS: JSON.stringify([
        backendRow("race-x", urls[0]!, ["drain-race"]),
        backendRow("race-y", urls[1 % urls.length]!, ["drain-race"]),
      ]),
      ROUTER_CELLS: "2",
    };
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    for (let round = 0; round < 3; round++) {
      const [x, y] = await Promise.all(
        ["race-x", "race-y"].map((id) =>
          gatewayWithEnv(pool, `/admin/backends/${id}/drain`, { method: "POST", headers: admin }),
        ),
      );
      const statuses = [x!.status, y!.status].sort();
      expect(statuses).toEqual([200, 409]);
      const refused = x!.status === 409 ? x! : y!;
      const { error } = (await refused.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe("last_backend");
      expect(error.message).toMatch(/no backend in rotation in any of its 2 RouterDO cells/);
      const list = await gatewayWithEnv(pool, "/admin/backends", { headers: admin });
      const { backends } = (await list.json()) as {
        backends: { id: string; pools: Record<string, { drained: boolean } | null> }[];
      };
      const drained = backends.filter((b) => b.pools["drain-race"]?.drained === true).map((b) => b.id);
      expect(drained).toEqual([x!.status === 200 ? "race-x" : "race-y"]);
      for (const id of drained) {
        const undrain = await gatewayWithEnv(pool, `/admin/backends/${id}/undrain`, {
          method: "POST",
          headers: admin,
        });
        expect(undrain.status).toBe(200);
      }
    }
  });

  it("a cell relays every cell's load: what one isolate's call told it, the next caller's response carries", async () => {
    const stub = env.ROUTER.getByName(`relay-test cell 1/2`);
    const spec = testPoolSpec([{ id: "relay-a", url: spareUrls()[0]! }]);
    // Isolate A heard from cell 2 twenty ms ago: 7 requests in flight. It knows nothing of cell 1.
    const a = await stub.route({
      fleetVersion: "relay-v1",
      spec,
      blocks: [1],
      promptTokens: 16,
      cellLoads: { cell: 0, figures: [0, -1, 7, 20] },
    });
    if (!a.ok) throw new Error(a.message);
    expect(a.cellLoads?.slice(0, 3)).toEqual([1, 0, 7]);
    // Isolate B never called cell 2: cell 1's answer tells it cell 2's figure (and its own, exactly).
    const b = await stub.route({
      fleetVersion: "relay-v1",
      blocks: [2],
      promptTokens: 16,
      cellLoads: { cell: 0, figures: [0, -1, 0, -1] },
    });
    if (!b.ok) throw new Error(b.message);
    expect(b.cellLoads?.[0]).toBe(2);
    expect(b.cellLoads?.[2]).toBe(7);
    expect(b.cellLoads?.[3]).toBeGreaterThanOrEqual(20);
    // Without a claim (one cell, or a Worker from before cells) the answer is as it always was.
    const c = await stub.route({ fleetVersion: "relay-v1", blocks: [3], promptTokens: 16 });
    if (!c.ok) throw new Error(c.message);
    expect(c.cellLoads).toBeUndefined();
    expect(c.cellInflight).toBe(3);
    for (const r of [a, b, c]) await stub.complete(r.leaseId, { ok: true });
  });

  it("a cell relays the conversations callers newly placed in it, the last CELL_RELAY_FAMILIES, to every caller", async () => {
    const stub = env.ROUTER.getByName(`relay-families cell 1/2`);
    const spec = testPoolSpec([{ id: "relay-f", url: spareUrls()[0]! }]);
    const figures = [0, -1, 0, -1];
    // Isolate A starts conversation 1001 here; isolate B, calling with nothing to tell, hears of it.
    const a = await stub.route({
      fleetVersion: "relay-f1",
      spec,
      blocks: [1],
      promptTokens: 16,
      cellLoads: { cell: 0, figures, placed: 1001 },
    });
    if (!a.ok) throw new Error(a.message);
    expect(a.cellFamilies).toEqual([1001]);
    const b = await stub.route({
      fleetVersion: "relay-f1",
      blocks: [2],
      promptTokens: 16,
      cellLoads: { cell: 0, figures },
    });
    if (!b.ok) throw new Error(b.message);
    expect(b.cellFamilies).toEqual([1001]);
    // Bounded: after CELL_RELAY_FAMILIES more (and a repeat, kept once) the first is gone; a malformed key is ignored.
    const leases = [a.leaseId, b.leaseId];
    for (let i = 0; i <= CELL_RELAY_FAMILIES; i++) {
      const r = await stub.route({
        fleetVersion: "relay-f1",
        blocks: [3 + i],
        promptTokens: 16,
        cellLoads: { cell: 0, figures, placed: i === CELL_RELAY_FAMILIES ? 2000 + i - 1 : 2000 + i },
      });
      if (!r.ok) throw new Error(r.message);
      leases.push(r.leaseId);
    }
    const bad = await stub.route({
      fleetVersion: "relay-f1",
      blocks: [99],
      promptTokens: 16,
      cellLoads: { cell: 0, figures, placed: "x" as unknown as number },
    });
    if (!bad.ok) throw new Error(bad.message);
    leases.push(bad.leaseId);
    expect(bad.cellFamilies).toEqual(
      [1001, ...Array.from({ length: CELL_RELAY_FAMILIES }, (_, i) => 2000 + i)].slice(-CELL_RELAY_FAMILIES),
    );
    // Without a claim (one cell) nothing is relayed.
    const c = await stub.route({ fleetVersion: "relay-f1", blocks: [100], promptTokens: 16 });
    if (!c.ok) throw new Error(c.message);
    expect(c.cellFamilies).toBeUndefined();
    leases.push(c.leaseId);
    for (const id of leases) await stub.complete(id, { ok: true });
  });

  it("the Worker names each conversation new to it once on its route call, and gets the cell's relay back", async () => {
    // Two cells; conversations under one long system prompt: the isolate's chooser splits the prompt (it is
    // every request's) and each conversation is a split-off family, new to this isolate on its first turn.
    const placed: number[] = [];
    const relayed: number[] = [];
    const ROUTER = interceptRoute(async (input, real) => {
      if (input.cellLoads?.placed !== undefined) placed.push(input.cellLoads.placed);
      const res = (await real(input)) as RouteResult;
      if (res.ok) relayed.push(...(res.cellFamilies ?? []));
      return res;
    });
    const system = longPrompt("relay-system");
    for (let i = 0; i < 12; i++)
      for (let turn = 0; turn < 2; turn++) {
        const body = JSON.parse(chatBody(system, `conversation ${i}: ${"why ".repeat(40)}`)) as Record<
          string,
          unknown
        >;
        const res = await gatewayWithEnv({ ...cellsEnv(), ROUTER }, "/v1/chat/completions", {
          method: "POST",
          headers: authHeaders(),
          body: JSON.stringify({ ...body, model: SPARE_MODEL }),
        });
        expect(res.status).toBe(200);
      }
    expect(placed.length).toBeGreaterThan(0);
    // Named once each (the second turn is no longer new to this isolate), and relayed back by the cells.
    expect(new Set(placed).size).toBe(placed.length);
    for (const key of placed) expect(relayed).toContain(key);
  });
});
