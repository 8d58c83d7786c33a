/**
 * Small helpers of the fault bench's measurements: waiting for a condition
 * with a deadline (every wait is bounded), and rounding figures for reports.
 */

/** Polls `check` every `everyMs` until it holds or `timeoutMs` passes; the ms it took, or undefined. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  everyMs = 100,
): Promise<number | undefined> {
  const t0 = performance.now();
  while (performance.now() - t0 < timeoutMs) {
    if (await check()) return performance.now() - t0;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return undefined;
}

export const round = (x: number | undefined, digits = 0): number | null =>
  x === undefined || !Number.isFinite(x) ? null : Number(x.toFixed(digits));
