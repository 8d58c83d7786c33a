/**
 * The admin's reads after a BACKENDS change, with the pool in RouterDO cells: each cell learned a new fleet
 * only on its own next route call, so right after a change /healthz (each cell's stats), /admin/stats and
 * /admin/backends showed a cell no request had reached yet with the old fleet: its old backends, their old
 * health, and none of the new ones (red-team.md "Faults with RouterDO cells", left alone item 3). The reads now
 * send each cell the Worker's current spec, as a route call does, and the cell takes it first.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  ADMIN_TOKEN,
  authHeaders,
  chatBody,
  gatewayWithEnv,
  longPrompt,
  SPARE_MODEL,
  spareCellsEnv,
} from "./helpers";

const CELL_NAMES = [`${SPARE_MODEL} cell 1/2`, `${SPARE_MODEL} cell 2/2`];
const BEFORE = ["fc-a", "fc-b", "fc-c", "fc-d"];
const AFTER = ["fc-a", "fc-b", "fc-c", "fc-d", "fc-e", "fc-f"];

const cellsEnv = spareCellsEnv;

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

async function cellIds(name: string): Promise<string[] | undefined> {
  const s = await env.ROUTER.getByName(name).stats();
  return s.ok ? s.backends.map((b) => b.id) : undefined;
}

describe("ROUTER_CELLS = 2: the admin's reads after a BACKENDS change", () => {
  it("/healthz, /admin/stats and /admin/backends show every cell's current fleet before any request reaches it", async () => {
    // Both cells learn the first fleet from requests (distinct prompts, until each cell has decided one).
    for (let i = 0; i < 48; i++) {
      const body = JSON.parse(chatBody(longPrompt(`fleet-change-${i}`), "q")) as Record<string, unknown>;
      const res = await gatewayWithEnv(cellsEnv(BEFORE), "/v1/chat/completions", {
        method: "POST",
        headers: authHeaders(),
        body: JSON.stringify({ ...body, model: SPARE_MODEL }),
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      const known = await Promise.all(CELL_NAMES.map(cellIds));
      if (known.every((ids) => ids?.every((id) => BEFORE.includes(id)))) break;
    }
    const learned = await Promise.all(CELL_NAMES.map(cellIds));
    expect(learned.flatMap((ids) => ids ?? []).sort()).toEqual(BEFORE);

    // The operator adds two backends; no request is sent. What the admin reads say is the new fleet.
    const changed = cellsEnv(AFTER);
    const health = await gatewayWithEnv(changed, "/healthz", { headers: admin });
    expect(health.status).toBe(200);
    const h = (await health.json()) as {
      pools: Record<string, { cells: Record<string, { ok: boolean; backends?: { id: string }[] }> }>;
    };
    const cells = h.pools[SPARE_MODEL]!.cells;
    expect(Object.keys(cells).sort()).toEqual(CELL_NAMES);
    const shown = Object.values(cells).flatMap((c) => (c.backends ?? []).map((b) => b.id));
    expect(shown.sort()).toEqual(AFTER);

    const stats = await gatewayWithEnv(changed, "/admin/stats", { headers: admin });
    const s = (await stats.json()) as { pools: Record<string, { ok: boolean; backends: { id: string }[] }> };
    expect(s.pools[SPARE_MODEL]!.backends.map((b) => b.id).sort()).toEqual(AFTER);

    const listed = await gatewayWithEnv(changed, "/admin/backends", { headers: admin });
    const l = (await listed.json()) as { backends: { id: string; pools: Record<string, unknown> }[] };
    for (const id of ["fc-e", "fc-f"]) {
      const row = l.backends.find((b) => b.id === id)!;
      expect(row.pools[SPARE_MODEL], id).not.toBeNull();
    }
  });
});
