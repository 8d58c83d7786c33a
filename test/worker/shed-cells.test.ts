/**
 * Load shedding across RouterDO cells (MAX_INFLIGHT_PER_BACKEND with ROUTER_CELLS): a first attempt whose cell
 * answers at_capacity is asked of another cell of the pool and shed only when every asked cell is full, with a
 * retry-after; with one cell nothing changes. Against test/worker/metrics-fault-server.ts /busy: each answer
 * streams a token every 200 ms for 4 s, so the streams opened here are all in flight together.
 *
 * The same prompt each time: one family, one home cell. The other cell has never answered this isolate, so the
 * cell chooser has no figure for it and keeps sending the family home (cell-ring.ts underCap): home fills first.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { RouteInput } from "../../src/worker/router/router-rpc";
import {
  authHeaders,
  expectOpenAIError,
  faultServerPool,
  gatewayWithEnv,
  interceptRoute,
  openWithEnv,
} from "./helpers";

function pool(model: string, cells: number, backends = 4) {
  return {
    ...faultServerPool(model, "busy", backends),
    MAX_INFLIGHT_PER_BACKEND: "1",
    ROUTER_CELLS: String(cells),
  };
}

function ask(model: string, content: string): RequestInit {
  return {
    method: "POST",
    headers: authHeaders(),
    body: JSON.stringify({ model, stream: true, max_tokens: 8, messages: [{ role: "user", content }] }),
  };
}

/** A cell's stats; a cell no request has reached yet holds no lease and has counted nothing. */
async function stats(name: string) {
  const s = await env.ROUTER.getByName(name).stats();
  if (s.ok) return { leases: s.leases, usage: s.usage };
  const none = { shed: 0, completed: 0, retried: 0, failed: 0, ejections: 0 };
  return { leases: 0, usage: none };
}

/** Reads a stream to its end: it must end whole, with [DONE]. */
async function endsWhole(res: Response): Promise<void> {
  const text = await res.text();
  expect(text).not.toContain("error");
  expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
}

async function settled(names: readonly string[]): Promise<void> {
  const until = Date.now() + 5000;
  for (;;) {
    const all = await Promise.all(names.map(stats));
    if (all.every((s) => s.leases === 0)) return;
    if (Date.now() > until) throw new Error("leases still open");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("load shedding across cells", () => {
  it("two cells, bound 1 on 2 backends each: home full, the request is served by the other cell; both full, a 429 with retry-after", async () => {
    const model = "shed-cells-move";
    const env2 = pool(model, 2);
    const names = [`${model} cell 1/2`, `${model} cell 2/2`];
    const open = [];
    // Home's two slots.
    for (let i = 0; i < 2; i++) {
      const o = await openWithEnv(env2, "/v1/chat/completions", ask(model, "same prompt"));
      expect(o.res.status).toBe(200);
      open.push(o);
    }
    const before = await Promise.all(names.map(stats));
    const home = before.findIndex((s) => s.leases === 2);
    expect(home).toBeGreaterThanOrEqual(0);
    const other = 1 - home;
    expect(before[other]!.leases).toBe(0);
    // Home is full: served by the other cell (before: 429 slow_down, though the other cell had two free slots).
    for (let i = 0; i < 2; i++) {
      const o = await openWithEnv(env2, "/v1/chat/completions", ask(model, "same prompt"));
      expect(o.res.status).toBe(200);
      open.push(o);
    }
    const moved = await Promise.all(names.map(stats));
    expect(moved[home]!.leases).toBe(2);
    expect(moved[other]!.leases).toBe(2);
    // Both full: shed at once, with a retry-after.
    const started = Date.now();
    const res = await gatewayWithEnv(env2, "/v1/chat/completions", ask(model, "same prompt"));
    expect(Date.now() - started).toBeLessThan(1000);
    const retryAfter = Number(res.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    await expectOpenAIError(res, 429, "slow_down");
    for (const o of open) await endsWhole(o.res);
    await Promise.all(open.map((o) => o.settled()));
    await settled(names);
    const after = await Promise.all(names.map(stats));
    // Counted shed once over the pool: the request the client was refused, not the moves (RouteInput.movable).
    expect(after.reduce((n, s) => n + s.usage.shed, 0)).toBe(1);
    expect(after.reduce((n, s) => n + s.usage.completed, 0)).toBe(4);
    expect(after.reduce((n, s) => n + s.usage.retried + s.usage.failed + s.usage.ejections, 0)).toBe(0);
  });

  it("guard: one cell (ROUTER_CELLS = 1), bound 1 on 4 backends: the 5th concurrent request is shed as before", async () => {
    const model = "shed-cells-one";
    const env1 = pool(model, 1);
    const open = [];
    for (let i = 0; i < 4; i++) {
      const o = await openWithEnv(env1, "/v1/chat/completions", ask(model, `r${i}`));
      expect(o.res.status).toBe(200);
      open.push(o);
    }
    const res = await gatewayWithEnv(env1, "/v1/chat/completions", ask(model, "r5"));
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    await expectOpenAIError(res, 429, "slow_down");
    for (const o of open) await endsWhole(o.res);
    await Promise.all(open.map((o) => o.settled()));
    await settled([model]);
    const s = await stats(model);
    expect(s.usage.shed).toBe(1);
    expect(s.usage.completed).toBe(4);
  });

  it("three cells: a cell heard full is not asked again for another cell's request within the second", async () => {
    const model = "shed-cells-skip";
    // The cells each route call went to, per request (RouteInput.cellLoads.cell).
    let calls: number[] = [];
    const ROUTER = interceptRoute((input: RouteInput, real) => {
      if (input.cellLoads !== undefined) calls.push(input.cellLoads.cell);
      return real(input);
    });
    const env3 = { ...pool(model, 3, 6), ROUTER };
    const open = [];
    const seen: number[][] = [];
    for (let i = 0; i < 6; i++) {
      calls = [];
      const o = await openWithEnv(env3, "/v1/chat/completions", ask(model, "same prompt"));
      expect(o.res.status).toBe(200);
      open.push(o);
      seen.push(calls);
    }
    // Home (H) takes two; then X, the first of its fallbacks, two; then Y.
    const [h, x, y] = [seen[0]![0]!, seen[2]![1]!, seen[4]![2]!];
    expect(new Set([h, x, y]).size).toBe(3);
    expect(seen.slice(0, 2)).toEqual([[h], [h]]);
    expect(seen.slice(2, 5)).toEqual([
      [h, x],
      [h, x],
      [h, x, y],
    ]);
    // X answered full a moment ago: the 6th goes from its full home straight to Y (before: [h, x, y]).
    expect(seen[5]).toEqual([h, y]);
    for (const o of open) await endsWhole(o.res);
    await Promise.all(open.map((o) => o.settled()));
    await settled([1, 2, 3].map((i) => `${model} cell ${i}/3`));
  });
});
