/**
 * The admin dashboard in a real browser: Debian's Chromium (/usr/bin/chromium,
 * installed by .ci/run) driven by playwright-core over CDP, with a fresh
 * profile per launch. Used by the dashboard test and by the screenshot
 * script; nothing here writes into the repository.
 */
import { constants } from "node:fs";
import { access, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Flags for a quiet, local-only browser: no sandbox (root in CI), no GPU, no background calls home. */
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Browser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Launches Chromium with a fresh --user-data-dir (a temp dir removed on close). Without the browser,
 * playwright's own error ("executable doesn't exist", a stack) said nothing of how to get one: `npm test`
 * installs it first (test/ensure-chromium.sh), `npm run bench:dashboard` did not.
 */
export async function launchChromium(path: string = CHROMIUM_PATH): Promise<Browser> {
  try {
    await access(path, constants.X_OK);
  } catch {
    throw new Error(
      `no Chromium at ${path}: install Debian's (sudo apt-get install chromium, or bash test/ensure-chromium.sh), ` +
        "or set CHROMIUM_PATH to a Chromium or Chrome binary",
    );
  }
  const profile = await mkdtemp(join(tmpdir(), "pgw-chromium-"));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: path,
      headless: true,
      args: FLAGS,
      viewport: { width: 1280, height: 900 },
    });
    return {
      context,
      close: async () => {
        await context.close();
        await rm(profile, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(profile, { recursive: true, force: true });
    throw err;
  }
}

export interface DashboardPage {
  readonly page: Page;
  /** Every URL the page requested (to check the token never rides in one). */
  readonly urls: string[];
}

/** Opens /admin/dashboard and signs in through its form. `pollMs`: the page's refresh interval. */
export async function openDashboard(
  browser: Browser,
  gatewayUrl: string,
  adminToken: string,
  o: { readonly pollMs?: number } = {},
): Promise<DashboardPage> {
  const page = await browser.context.newPage();
  const urls: string[] = [];
  page.on("request", (r) => urls.push(r.url()));
  const query = o.pollMs === undefined ? "" : `?interval=${o.pollMs}`;
  await page.goto(`${gatewayUrl}/admin/dashboard${query}`);
  await page.fill("#token", adminToken);
  await page.click("#login button[type=submit]");
  return { page, urls };
}

export interface ChartReport {
  /** Non-null points across the chart's series. */
  readonly points: number;
  /** Pixels of the chart's canvas in a saturated colour: drawn series, not grid or axes. */
  readonly inkPixels: number;
  readonly series: readonly string[];
}

export interface DrawnReport {
  readonly polls: number;
  readonly charts: Readonly<Record<string, ChartReport>>;
  readonly urls: readonly string[];
}

/** Waits for `polls` refreshes, then reads what each uPlot chart holds and drew. */
export async function chartsDrawn(
  d: DashboardPage,
  o: { readonly polls: number; readonly timeoutMs: number },
): Promise<DrawnReport> {
  await d.page.waitForFunction(
    (n) => ((window as unknown as { __dashboard?: { polls: number } }).__dashboard?.polls ?? 0) >= n,
    o.polls,
    { timeout: o.timeoutMs },
  );
  const report = await d.page.evaluate(() => {
    interface UPlotLike {
      data: (number | null)[][];
      series: { label?: string }[];
      ctx: CanvasRenderingContext2D;
    }
    const dash = (window as unknown as { __dashboard: { polls: number; charts: Record<string, UPlotLike> } })
      .__dashboard;
    const charts: Record<string, { points: number; inkPixels: number; series: string[] }> = {};
    for (const [name, u] of Object.entries(dash.charts)) {
      let points = 0;
      for (const s of u.data.slice(1)) for (const v of s) if (v !== null && v !== undefined) points++;
      const { width, height } = u.ctx.canvas;
      const px = u.ctx.getImageData(0, 0, width, height).data;
      let inkPixels = 0;
      for (let i = 0; i < px.length; i += 4) {
        const max = Math.max(px[i]!, px[i + 1]!, px[i + 2]!);
        const min = Math.min(px[i]!, px[i + 1]!, px[i + 2]!);
        if (px[i + 3]! > 0 && max - min > 60) inkPixels++;
      }
      charts[name] = { points, inkPixels, series: u.series.slice(1).map((s) => String(s.label ?? "")) };
    }
    return { polls: dash.polls, charts };
  });
  return { ...report, urls: [...d.urls] };
}
