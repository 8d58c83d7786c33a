/**
 * The simulator's decisions for the e2e replay's first requests (the same window, fleet, ids and routing
 * core as the e2e report's prediction, bench/e2e/sim-prediction.ts), one line each: request, arrival,
 * backend, reason, prompt tokens. Usage (args as bench:e2e's):
 *   npx tsx bench/results/e2e-idle-emu/sim-first-bursts.ts --workload mooncake --speed 2 --duration 60 --backends 16 --max-output-tokens 32 [N]
 */
import { parseE2eArgs } from "../../e2e/args";
import { emulatorIds } from "../../e2e/backend-ids";
import { predictionFleet, replayWindow } from "../../e2e/replay-window";
import { routerFactory, viewOf } from "../../../sim/policies";
import { DEFAULT_PREFIX_TOKENS, prepareWorkload } from "../../../sim/prepare";
import { simulatePolicy } from "../../../sim/simulator";

const argv = process.argv.slice(2);
// A last bare number after an option's value: how many decisions to print (default 40).
const n = /^\d+$/.test(argv.at(-1) ?? "") && !argv.at(-2)?.startsWith("--") ? Number(argv.pop()) : 40;
const a = parseE2eArgs(argv);
const { engine, workload, window } = await replayWindow(a);
const fleet = predictionFleet(a, engine);
const w = prepareWorkload(
  { name: workload.name, blockTokens: engine.blockTokens, requests: window, malformed: 0 },
  { prefixTokens: DEFAULT_PREFIX_TOKENS, maxTokens: a.maxTokens, seed: fleet.seed },
);
const { kvCacheTokens, blockTokens: _bt, ...eng } = engine;
const ids = emulatorIds(a.backends);
const counts = new Map<string, number>();
const first = new Map<string, number>();
simulatePolicy(
  w,
  { backends: a.backends, ids, kvCacheTokens, engine: eng, seed: fleet.seed },
  "prefix_aware",
  routerFactory("prefix_aware", w.blockTokens),
  viewOf("prefix_aware"),
  () => performance.now(),
  {
    routed(i, backend, decision) {
      const id = ids[backend]!;
      counts.set(id, (counts.get(id) ?? 0) + 1);
      if (!first.has(id)) first.set(id, i);
      if (i < n)
        console.log(
          `${i}\t${window[i]!.arrivalMs}\t${id}\t${decision.reason}\t${window[i]!.promptTokens}`,
        );
    },
  },
);
console.log("first request per backend:", JSON.stringify([...first]));
console.log("requests per backend:", JSON.stringify([...counts].sort((x, y) => y[1] - x[1])));
