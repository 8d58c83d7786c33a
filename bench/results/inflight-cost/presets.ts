// What one more running request adds to an engine step on each preset of the simulator's engine model (the
// emulator's default engine is the 8B preset): the engine's own step-time code, stepMs(d + 1, C + c, 0) −
// stepMs(d, C, 0), at a decode batch of d sequences each holding c tokens of context (C = d·c).
//   npx tsx bench/results/inflight-cost/presets.ts
import { ENGINE_PRESETS } from "../../../sim/model/presets";
import { StepCost } from "../../../sim/model/step-time";

const contexts = [2_000, 12_000];
const batches = [1, 8, 32, 64];
console.log(`| preset | ${contexts.flatMap((c) => batches.map((d) => `d=${d}, ${c / 1000}k`)).join(" | ")} |`);
console.log(`|---|${contexts.flatMap(() => batches.map(() => "---")).join("|")}|`);
for (const [name, config] of Object.entries(ENGINE_PRESETS)) {
  const s = new StepCost(config);
  const cells = contexts.flatMap((c) => batches.map((d) => (s.stepMs(d + 1, (d + 1) * c, 0) - s.stepMs(d, d * c, 0)).toFixed(3)));
  console.log(`| ${name} | ${cells.join(" | ")} |`);
}
console.log("\nms per request; the constant it replaces is 2 ms.");
