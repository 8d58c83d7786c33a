/**
 * A second client around the gateway: a share of the workload's requests
 * goes straight to an engine and never through the router — another team's
 * client, another gateway, a batch job on the same fleet. It is the load
 * only the engines' own readings show a router (src/routing/foreign-load.ts).
 *
 * Which requests it sends, and to which engine, is drawn from the run's
 * seed alone, so every policy of a run faces the same requests on the same
 * engines. It picks uniformly among the first `backends` engines: all of
 * them (a naive client behind a round-robin service address), or a few (a
 * client pinned to part of the fleet, which is where a router that cannot
 * see it piles onto busy engines).
 */
import { Rng } from "./workloads/prng";

export interface SecondClient {
  /** Share of the workload's requests it sends, 0 < share < 1. */
  readonly share: number;
  /** It sends to engines 0 … backends−1; default all of them. */
  readonly backends?: number;
}

/** "0.3" (all engines) or "0.3:2" (the first two). */
export function parseSecondClient(spec: string): SecondClient {
  const m = /^\s*([0-9.]+)\s*(?::\s*(\d+)\s*)?$/.exec(spec);
  const share = m === null ? Number.NaN : Number(m[1]);
  if (m === null || !(share > 0 && share < 1))
    throw new Error(`expected SHARE or SHARE:BACKENDS with 0 < SHARE < 1, got "${spec}"`);
  if (m[2] === undefined) return { share };
  const backends = Number(m[2]);
  if (!(backends >= 1)) throw new Error(`BACKENDS must be ≥ 1, got "${m[2]}"`);
  return { share, backends };
}

/** Its part of a report's name: "-sc0.3", "-sc0.3of2"; "" for none. */
export function secondClientTag(c: SecondClient | undefined): string {
  if (c === undefined) return "";
  return `-sc${c.share}${c.backends !== undefined ? `of${c.backends}` : ""}`;
}

/** Engines it sends to, checked against the fleet. */
export function secondClientBackends(c: SecondClient, fleetSize: number): number {
  const k = c.backends ?? fleetSize;
  if (!Number.isInteger(k) || k < 1 || k > fleetSize)
    throw new RangeError(`second client: backends must be 1..${fleetSize}, got ${k}`);
  return k;
}

/**
 * Per request: the engine the second client sends it to, or −1 when it goes
 * through the router. A pure function of (requests, fleet size, client, seed).
 */
export function secondClientTargets(
  requests: number,
  fleetSize: number,
  c: SecondClient | undefined,
  seed: number,
): Int32Array {
  const out = new Int32Array(requests).fill(-1);
  if (c === undefined) return out;
  const k = secondClientBackends(c, fleetSize);
  const rng = new Rng(seed).fork("second-client");
  for (let i = 0; i < requests; i++) {
    const around = rng.next() < c.share;
    const target = Math.min(k - 1, Math.floor(rng.next() * k));
    if (around) out[i] = target;
  }
  return out;
}

/** One line for reports: what went around the gateway. */
export function describeSecondClient(c: SecondClient | undefined, fleetSize: number): string {
  if (c === undefined) return "none: every request goes through the router";
  const k = secondClientBackends(c, fleetSize);
  return (
    `${(100 * c.share).toFixed(0)}% of requests (drawn by the seed) go straight to an engine, never through ` +
    `the router, uniformly among ${k === fleetSize ? `all ${k} engines` : `the first ${k} of ${fleetSize}`}`
  );
}
