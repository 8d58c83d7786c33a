/**
 * est-bound-2's index-wipe.ts (bench/results/est-bound-2/index-wipe.ts, its scenario) on this branch, with two
 * more cases: a count the prompt bound cut that the engine confirms (300,000 counted, 262,000 by the engine),
 * and the hole left (red-team.md, branch index-wipe, left alone 1): a fake counted just under L (260,000),
 * which the bound does not cut.
 * Run: npx tsx bench/results/index-wipe/index-wipe-after.ts
 */
import { printCases } from "../est-bound-2/index-wipe";

printCases([
  [0, undefined],
  [393_216, 20_000],
  [393_216, undefined],
  [300_000, 262_000],
  [262_144, 262_000],
  [260_000, 20_000],
]);
