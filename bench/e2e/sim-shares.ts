/**
 * The e2e replay's simulator prediction (sim-prediction.ts's path: same window, fleet, engine config,
 * backend ids, max_tokens model and scrape interval as `npm run bench:e2e` with the same flags), printed
 * per backend: each policy's share of the requests and its hit rate. A cheap check, without emulators,
 * of how a policy spreads the replay's requests (a backend that sits out shows as 0.0%).
 *
 *   npx tsx bench/e2e/sim-shares.ts --workload mooncake --speed 2 --duration 300 --backends 16 \
 *     --max-output-tokens 32 --arms prefix_aware
 */
import { DEFAULT_ENGINE_CONFIG } from "../../sim/model/engine-model";
import type { EngineConfig } from "../../sim/model/types";
import { isSimPolicy, type SimPolicyName } from "../../sim/policies";
import { DEFAULT_PREFIX_TOKENS, prepareWorkload } from "../../sim/prepare";
import { runPolicies } from "../../sim/run";
import { isTraceSpec, loadWorkload } from "../../sim/workloads/index";
import { parseE2eArgs } from "./args";
import { emulatorIds } from "./backend-ids";
import { selectWindow } from "./requests";

async function main(argv: readonly string[]): Promise<void> {
  const a = parseE2eArgs(argv);
  const engine: EngineConfig = {
    ...DEFAULT_ENGINE_CONFIG,
    ...(a.kvCacheTokens !== undefined ? { kvCacheTokens: a.kvCacheTokens } : {}),
  };
  const workload = await loadWorkload(a.workload, {
    rate: a.rate,
    seed: a.seed,
    speed: 1,
    ...(a.requests !== undefined && !isTraceSpec(a.workload) ? { requests: a.requests } : {}),
  });
  const isTrace = isTraceSpec(a.workload);
  const cap = a.maxOutputTokens;
  const window = selectWindow(workload.requests, {
    speed: a.speed,
    durationMs: a.durationS * 1000,
    maxRequests: isTrace && a.requests !== undefined ? Math.min(a.maxRequests, a.requests) : a.maxRequests,
  }).map((r) => (cap !== undefined && r.outputTokens > cap ? { ...r, outputTokens: cap } : r));
  const w = prepareWorkload(
    { name: workload.name, blockTokens: engine.blockTokens, requests: window, malformed: 0 },
    { prefixTokens: DEFAULT_PREFIX_TOKENS, maxTokens: a.maxTokens, seed: a.seed },
  );
  const { kvCacheTokens, blockTokens: _bt, ...rest } = engine;
  const ids = emulatorIds(a.backends);
  const names = a.arms.filter((p): p is SimPolicyName => isSimPolicy(p));
  const report = runPolicies(
    w,
    {
      backends: a.backends,
      ids,
      kvCacheTokens,
      engine: rest,
      seed: a.seed,
      ...(a.scrapeMs > 0 ? { scrapeMs: a.scrapeMs } : {}),
      ...(a.secondClient !== undefined ? { secondClient: a.secondClient } : {}),
    },
    names,
  );
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
