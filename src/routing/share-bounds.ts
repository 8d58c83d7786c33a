/**
 * Confidence bounds on a share estimated from counts: Wilson's score
 * interval for `hits` of `n` (decayed counts may be fractional). The cell
 * choice (cell-chooser.ts) splits a family only when even the low end of its
 * share fills a cell, and joins it again only when even the high end is well
 * below: a decision that waits for as much evidence as the family's share
 * needs, and no more. A family with all of an isolate's first few requests is
 * hot after a handful of them; one near the threshold takes hundreds. So it
 * works the same in an isolate that sees 1/100 of a pool's traffic as in one
 * that sees all of it, where a fixed minimum of requests per isolate left
 * each of eight isolates sending a hot family whole for its first 64.
 */

/** Wilson's interval for hits/n at z standard errors: [low, high], [0, 1] with no evidence. */
export function shareBounds(hits: number, n: number, z: number): { low: number; high: number } {
  if (!(n > 0)) return { low: 0, high: 1 };
  const p = Math.min(1, Math.max(0, hits / n));
  const z2 = z * z;
  const centre = p + z2 / (2 * n);
  const spread = z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  const denom = 1 + z2 / n;
  return { low: Math.max(0, (centre - spread) / denom), high: Math.min(1, (centre + spread) / denom) };
}
