/**
 * The dashboard's backend table says why a backend held out stays out: its relapses in a row and when its next
 * probe is due, beside "ejected"; and a backend back on probation, how many good requests it still owes
 * (README "Outlier detection"). The page, its script and uPlot are the files the
 * Worker serves; /admin/stats is answered with a pool view built by the same code as the Worker's (poolView),
 * through the browser's request routing, so no gateway runs. Debian's Chromium, as in operator-loop.test.ts.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, launchChromium, openDashboard } from "../../bench/e2e/dashboard-browser";
import type { PoolSnapshot } from "../../src/worker/stats/pool-snapshot";
import { PoolStats } from "../../src/worker/stats/pool-stats";
import { poolView } from "../../src/worker/stats/stats-view";

const ORIGIN = "http://dashboard.test";
const TOKEN = "dashboard-test-token-0123456789";
const NEXT_PROBE = Date.UTC(2026, 0, 2, 3, 4, 5);
const require = createRequire(import.meta.url);

function snapshot(): PoolSnapshot {
  const base = { healthy: true, drained: false, throttled: false, inflight: 0, consecutiveFailures: 0 };
  return {
    fleetVersion: "v1",
    at: Date.now(),
    backends: [
      { ...base, id: "steady" },
      { ...base, id: "liar", healthy: false, consecutiveFailures: 3, relapses: 3, nextProbeAt: NEXT_PROBE },
      { ...base, id: "back", relapses: 2, probation: 2 },
    ],
    counters: { retried: 0, retriesRefused: 0, ejections: 4, restorations: 3, expired: 0, observed: 0 },
    ...new PoolStats(["prefix_aware"]).snapshot(),
  };
}

let browser: Browser | undefined;

beforeAll(async () => {
  browser = await launchChromium();
  const dir = new URL("../../src/worker/admin/dashboard/", import.meta.url);
  const files: Record<string, [string, string]> = {
    "/admin/dashboard": [await readFile(new URL("dashboard.html", dir), "utf8"), "text/html"],
    "/admin/dashboard/app.js": [await readFile(new URL("app.js", dir), "utf8"), "text/javascript"],
    "/admin/dashboard/dashboard.css": [await readFile(new URL("dashboard.css", dir), "utf8"), "text/css"],
    "/admin/dashboard/uplot.js": [
      await readFile(require.resolve("uplot/dist/uPlot.iife.min.js"), "utf8"),
      "text/javascript",
    ],
    "/admin/dashboard/uplot.css": [
      await readFile(require.resolve("uplot/dist/uPlot.min.css"), "utf8"),
      "text/css",
    ],
  };
  await browser.context.route(`${ORIGIN}/**`, async (route) => {
    const url = new URL(route.request().url());
    if (url.pathname === "/admin/stats") {
      const pools = { m: { ok: true, ...poolView(snapshot()) } };
      const body = JSON.stringify({
        at: Date.now(),
        policy: "prefix_aware",
        abPolicy: null,
        shadow: false,
        pools,
      });
      return route.fulfill({ status: 200, contentType: "application/json", body });
    }
    const file = files[url.pathname];
    if (file === undefined) return route.fulfill({ status: 404, body: "" });
    return route.fulfill({ status: 200, contentType: file[1], body: file[0] });
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

describe("the dashboard's backend table", () => {
  it("shows a relapsing backend's relapses and next probe beside ejected, one on probation; a steady one as before", async () => {
    const { page } = await openDashboard(browser!, ORIGIN, TOKEN, { pollMs: 250 });
    await page.waitForSelector("#backends tr:nth-child(4)", { timeout: 20_000 });
    const rows = await page.evaluate(() =>
      Array.from(document.querySelectorAll("#backends tr")).map((r) =>
        Array.from(r.children).map((c) => c.textContent ?? ""),
      ),
    );
    const col = rows[0]!.indexOf("in rotation");
    const at = await page.evaluate((t) => new Date(t).toLocaleTimeString(), NEXT_PROBE);
    expect(rows.slice(1).map((r) => [r[0], r[col]])).toEqual([
      ["steady", "yes"],
      ["liar", `ejected · relapsed 3× · next probe ${at}`],
      ["back", "yes · relapsed 2× · on probation (2 to go)"],
    ]);
  }, 60_000);
});
