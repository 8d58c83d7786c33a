/** Small read helpers over a FleetView shared by the baselines. */

import type { EngineSignals, FleetView } from "../../src/routing/types";

/** Indices of healthy backends, in fleet order. */
export function healthyIndices(fleet: FleetView): number[] {
  const out: number[] = [];
  for (let i = 0; i < fleet.backends.length; i++) if (fleet.healthy[i]) out.push(i);
  if (out.length === 0) throw new Error("baseline pick: no healthy backend in the fleet");
  return out;
}

/** First index (in fleet order) among `candidates` with the fewest router-placed in-flight requests. */
export function leastInflight(fleet: FleetView, candidates: readonly number[]): number {
  let best = candidates[0]!;
  for (const i of candidates) if (fleet.inflight[i]! < fleet.inflight[best]!) best = i;
  return best;
}

/**
 * Engine signals, or a clear error: these baselines read metrics only the
 * simulator provides, live for every backend (SOURCES.md, "Metric staleness").
 */
export function requireSignals(fleet: FleetView, policy: string): (i: number) => EngineSignals {
  const signals = fleet.engineSignals;
  if (signals === undefined) {
    throw new Error(
      `${policy} baseline needs fleet.engineSignals (engine metrics); only the simulator provides them`,
    );
  }
  return (i) => {
    const s = signals(i);
    if (s === undefined) throw new Error(`${policy} baseline: no engine signals for backend ${i}`);
    return s;
  };
}
