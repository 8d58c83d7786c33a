/**
 * The fault table: each scenario of scenarios/ in the order of the issue's
 * table, one at a time, each on a fresh rig (emulators, gateway, RouterDO
 * storage), so no health state or affinity carries from one to the next.
 */
import { type RunScenarioOptions, runScenario, type ScenarioResult } from "./run-scenario";
import type { Scenario } from "./scenario";
import { concurrentFailures } from "./scenarios/concurrent-failures";
import { cut } from "./scenarios/cut";
import { hang } from "./scenarios/hang";
import { hugeBody } from "./scenarios/huge-body";
import { hugeMessage } from "./scenarios/huge-message";
import { leavers } from "./scenarios/leavers";
import { movedBackend } from "./scenarios/moved-backend";
import { poison } from "./scenarios/poison";
import { throttle } from "./scenarios/throttle";

export const SCENARIOS: readonly Scenario[] = [
  poison,
  hang,
  hugeMessage,
  throttle,
  leavers,
  concurrentFailures,
  cut,
  hugeBody,
  movedBackend,
];

/** The scenarios named in `only` (all when empty); an unknown name is an error. */
export function selectScenarios(only: readonly string[]): Scenario[] {
  if (only.length === 0) return [...SCENARIOS];
  const byId = new Map(SCENARIOS.map((s) => [s.id, s]));
  return only.map((id) => {
    const s = byId.get(id);
    if (s === undefined) throw new Error(`--only: unknown scenario "${id}" (${[...byId.keys()].join(", ")})`);
    return s;
  });
}

export async function runTable(
  scenarios: readonly Scenario[],
  opts: RunScenarioOptions,
): Promise<ScenarioResult[]> {
  const out: ScenarioResult[] = [];
  for (const s of scenarios) {
    opts.log(`scenario ${s.id}: ${s.fault}`);
    const r = await runScenario(s, opts);
    opts.log(`  ${s.id}: ${r.now}`);
    out.push(r);
  }
  return out;
}
