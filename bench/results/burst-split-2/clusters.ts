// Which burst seeds outside both sets have clustered bursts: for each seed, the group starts of the burst
// workload (the first arrival of each group, 16 requests each) at a rate, and the largest number of bursts
// starting within WINDOW ms (300 by default) of one another, with how many such clusters of ≥ 3 there are.
// Seeds 3–5 (scoring) and 1–2 (tuning stand-in) are never looked at here.
//   npx tsx bench/results/burst-split-2/clusters.ts RATE FIRST_SEED LAST_SEED [WINDOW]
import { burst } from "../../../sim/workloads/burst";

const [rate = 28, first = 9, last = 30, windowMs = 300] = process.argv.slice(2).map(Number);
for (let seed = first; seed <= last; seed++) {
  if (seed >= 1 && seed <= 5) continue;
  const w = burst({ rate, seed });
  const starts = new Map<string, number>();
  for (const r of w.requests) {
    if (r.prompt.kind !== "segments") throw new Error("burst requests are segments");
    const g = r.prompt.segments[0]!.key;
    if (!starts.has(g)) starts.set(g, r.arrivalMs);
  }
  const s = [...starts.values()].sort((a, b) => a - b);
  let most = 0;
  let at = 0;
  let clusters = 0;
  for (let i = 0, j = 0; i < s.length; i++) {
    while (s[j]! < s[i]! - windowMs) j++;
    const k = i - j + 1;
    if (k > most) {
      most = k;
      at = s[j]!;
    }
  }
  // Disjoint clusters of ≥ 3 starts within the window (greedy, left to right).
  for (let i = 0; i < s.length; ) {
    let j = i;
    while (j + 1 < s.length && s[j + 1]! - s[i]! <= windowMs) j++;
    if (j - i + 1 >= 3) {
      clusters++;
      i = j + 1;
    } else i++;
  }
  console.log(`seed ${seed}: most bursts within ${windowMs} ms: ${most} (from t=${(at / 1000).toFixed(2)} s); clusters of >=3: ${clusters}`);
}
