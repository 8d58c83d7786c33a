/**
 * The e2e replay's simulator prediction (sim-prediction.ts's path: same window, fleet, engine config,
 * backend ids, max_tokens model and scrape interval as `npm run bench:e2e` with the same flags), printed
 * per backend: each policy's share of the requests and its hit rate. A cheap check, without emulators,
 * of how a policy spreads the replay's requests (a backend that sits out shows as 0.0%).
 *
 *   npx tsx bench/e2e/sim-shares.ts --workload mooncake --speed 2 --duration 300 --backends 16 \
 *     --max-output-tokens 32 --arms prefix_aware
 */
import { DEFAULT_PREFIX_TOKENS } from "../../sim/prepare";
import { parseE2eArgs } from "./args";
import { emulatorIds } from "./backend-ids";
import { predictionFleet, replayWindow } from "./replay-window";
import { predictionReport } from "./sim-prediction";

async function main(argv: readonly string[]): Promise<void> {
  const a = parseE2eArgs(argv);
  const { engine, workload, window } = await replayWindow(a);
  const report = predictionReport(
    workload.name,
    window,
    a.arms,
    predictionFleet(a, engine),
    DEFAULT_PREFIX_TOKENS,
    a.maxTokens,
  );
  const ids = emulatorIds(a.backends);
  console.log(`${window.length} requests; oracle hit ${(100 * report.oracle.hitRate).toFixed(1)}%`);
  for (const r of report.policies) {
    const shares = r.requestShare.map((s, i) => `${ids[i]} ${(100 * s).toFixed(1)}%`).join(", ");
    const idle = r.requestShare.filter((s) => s === 0).length;
    const rate =
      r.learnedPrefillTokensPerSec !== undefined
        ? `, learned prefill rate at the end ${Math.round(r.learnedPrefillTokensPerSec)} tok/s (model time)`
        : "";
    console.log(
      `${r.policy}: hit ${(100 * r.hitRate).toFixed(1)}%, TTFT p50 ${r.ttftP50Ms.toFixed(1)} / p99 ${r.ttftP99Ms.toFixed(1)} ms, backends with no request ${idle}${rate}`,
    );
    console.log(`  ${shares}`);
  }
}

main(process.argv.slice(2)).catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
