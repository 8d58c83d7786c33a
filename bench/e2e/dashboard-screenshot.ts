/**
 * Keeps the dashboard's picture: the operator rig (bench/e2e/operator-loop.ts:
 * four emulators behind the gateway in workerd, a 50/50 A/B split of
 * prefix_aware against least_outstanding, the shadow on), a multi-turn
 * workload running while Debian's Chromium shows /admin/dashboard, then a
 * screenshot of the page and the figures /admin/stats gave at that moment.
 * One operation: the whole loop; the figure that matters is that the page
 * shows live data (and the two arms apart).
 *
 *   npm run bench:dashboard        → bench/results/dashboard.png, dashboard.md
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { provenance } from "../faults/provenance";
import { chartsDrawn, launchChromium, openDashboard } from "./dashboard-browser";
import { adminGet, LOOP_MODEL, runConversations, startOperatorRig } from "./operator-loop";

const COMMAND = "npm run bench:dashboard";
const OUT = join(process.cwd(), "bench", "results");
/** The page refreshes every second; the picture is taken after this many refreshes. */
const POLLS = 25;

interface ArmFigures {
  arm: string;
  policy: string;
  requests: number;
  hitRate: { delivered: number | null; expected: number | null; available: number | null };
  ttftMs: { p50: number | null; p99: number | null };
}

async function main(): Promise<void> {
  const prov = provenance(COMMAND);
  // The browser first: without one the command stops at once, before a rig it would leave running.
  const browser = await launchChromium();
  const rig = await startOperatorRig().catch(async (err: unknown) => {
    await browser.close();
    throw err;
  });
  const stop = new AbortController();
  try {
    const traffic = runConversations(rig.gateway, {
      conversations: 10_000,
      turns: 5,
      concurrency: 8,
      signal: stop.signal,
    });
    const page = await openDashboard(browser, rig.gateway.url, rig.adminToken, { pollMs: 1000 });
    const drawn = await chartsDrawn(page, { polls: POLLS, timeoutMs: 120_000 });
    await page.page.screenshot({ path: join(OUT, "dashboard.png"), fullPage: true });
    const stats = (await (await adminGet(rig, "/admin/stats")).json()) as {
      pools: Record<string, { arms: ArmFigures[]; shadow?: { expectedHitRate: number | null } }>;
    };
    stop.abort();
    await traffic;
    const p = stats.pools[LOOP_MODEL]!;
    const pct = (v: number | null) => (v === null ? "–" : `${(100 * v).toFixed(1)}%`);
    const ms = (v: number | null) => (v === null ? "–" : `${v.toFixed(0)} ms`);
    const rows = p.arms.map(
      (a) =>
        `| ${a.arm} | ${a.policy} | ${a.requests} | ${pct(a.hitRate.available)} | ${pct(a.hitRate.expected)} | ${pct(a.hitRate.delivered)} | ${ms(a.ttftMs.p50)} | ${ms(a.ttftMs.p99)} |`,
    );
    const md = [
      "# The admin dashboard, live",
      "",
      `Command: \`${COMMAND}\` (${prov.startedAt}; ${prov.machine}; commit ${prov.commit}; gateway ${prov.gatewayCommit}${prov.gatewayDirty ? ", uncommitted changes" : ""}).`,
      `Runtime: ${prov.runtime}.`,
      "",
      "Four emulators behind the gateway in workerd, `AB_POLICY=least_outstanding AB_PERCENT=50 SHADOW=on` with",
      "`ROUTING_POLICY=prefix_aware`; conversations about a document each, 5 turns, 8 at once",
      "(bench/e2e/operator-loop.ts). Debian's Chromium shows `/admin/dashboard` (refresh 1 s); the picture is taken",
      `after ${drawn.polls} refreshes.`,
      "",
      "![dashboard](dashboard.png)",
      "",
      "/admin/stats at that moment:",
      "",
      "| arm | policy | requests | reuse available | captured (expected) | delivered | TTFT p50 | TTFT p99 |",
      "| --- | ------ | -------: | --------------: | ------------------: | --------: | -------: | -------: |",
      ...rows,
      "",
      `Shadow (prefix_aware on all traffic), expected hit rate: ${pct(p.shadow?.expectedHitRate ?? null)}.`,
      "",
      `Points drawn per chart: ${Object.entries(drawn.charts)
        .map(([k, c]) => `${k} ${c.points}`)
        .join(", ")}.`,
      "",
    ].join("\n");
    await writeFile(join(OUT, "dashboard.md"), md);
    process.stdout.write(md);
  } finally {
    stop.abort();
    await browser.close();
    await rig.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
