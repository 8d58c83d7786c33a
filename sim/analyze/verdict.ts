/**
 * The verdict, one rule written once (printed by the command and quoted in
 * the README): prefix-aware routing is worth enabling when the traffic
 * repeats enough of its prompts to matter AND the simulated fleet turns that
 * into capacity or latency. Either alone is not enough: sharing a fleet
 * cannot exploit (too little KV, an idle fleet where prefill is cheap) buys
 * nothing, and a latency gain on traffic that shares nothing comes from load
 * balancing, which least_outstanding also offers.
 */
import type { FleetEstimate } from "./fleet-estimate";

export type Verdict = "enable" | "skip";

export const MIN_SHARED_PREFIX_SHARE = 0.1;
export const MIN_CAPACITY_GAIN = 1.1;
export const MIN_TTFT_P50_CUT_PCT = 10;
export const MAX_TTFT_P99_RISE_PCT = 5;

export const VERDICT_RULE =
  `enable when (1) at least ${MIN_SHARED_PREFIX_SHARE * 100}% of prompt tokens are in prefixes already seen ` +
  `(unbounded cache) and (2) on the simulated fleet prefix_aware either sustains at least ` +
  `${MIN_CAPACITY_GAIN}× least_outstanding's requests per instance within the TTFT p99 SLO, or cuts TTFT p50 ` +
  `by at least ${MIN_TTFT_P50_CUT_PCT}% at the log's own rate without raising p99 by more than ` +
  `${MAX_TTFT_P99_RISE_PCT}%; otherwise skip`;

export interface VerdictResult {
  readonly verdict: Verdict;
  /** The figures behind it, one clause each, in the rule's order. */
  readonly because: readonly string[];
}

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
const signed = (x: number): string => `${x > 0 ? "+" : ""}${x.toFixed(0)}%`;

export function decide(sharedPrefixShare: number, e: FleetEstimate): VerdictResult {
  const because: string[] = [];
  const shares = sharedPrefixShare >= MIN_SHARED_PREFIX_SHARE;
  because.push(
    `${pct(sharedPrefixShare)} of prompt tokens repeat an earlier prefix (${shares ? "≥" : "<"} ${pct(MIN_SHARED_PREFIX_SHARE)})`,
  );
  const ours = e.requestsPerInstanceAtSlo.prefix_aware;
  const theirs = e.requestsPerInstanceAtSlo.least_outstanding;
  const capacityGain = theirs > 0 ? ours / theirs : ours > 0 ? Number.POSITIVE_INFINITY : 0;
  const capacity = capacityGain >= MIN_CAPACITY_GAIN;
  // A rate the search never saw fail (too few runs, or a log too light to load the fleet) is a lower
  // bound, and the report's table prints it "≥ r": said so here too, or "60.06 against 60.06 (1.00×)"
  // reads as a measured tie when both policies only met the search's ceiling.
  const atLeast = (name: "prefix_aware" | "least_outstanding"): string =>
    e.policies?.[name]?.capacityBound === "atLeast" ? "≥ " : "";
  const ceiling =
    atLeast("prefix_aware") !== "" && atLeast("least_outstanding") !== ""
      ? "; neither limit found, so no capacity gain is shown"
      : "";
  because.push(
    `within a TTFT p99 of ${(e.sloTtftP99Ms / 1000).toFixed(1)} s prefix_aware sustains ${atLeast("prefix_aware")}${ours.toFixed(2)} requests/s ` +
      `per instance against ${atLeast("least_outstanding")}${theirs.toFixed(2)} (${Number.isFinite(capacityGain) ? `${capacityGain.toFixed(2)}×` : "only it meets the SLO"}; ` +
      `${capacity ? "≥" : "<"} ${MIN_CAPACITY_GAIN}×${ceiling})`,
  );
  const latency = e.ttftP50ChangePct <= -MIN_TTFT_P50_CUT_PCT && e.ttftP99ChangePct <= MAX_TTFT_P99_RISE_PCT;
  because.push(
    `at the log's rate TTFT p50 ${signed(e.ttftP50ChangePct)} and p99 ${signed(e.ttftP99ChangePct)} against ` +
      `least_outstanding (${latency ? "a" : "not a"} cut of ≥ ${MIN_TTFT_P50_CUT_PCT}% with p99 ≤ +${MAX_TTFT_P99_RISE_PCT}%)`,
  );
  return { verdict: shares && (capacity || latency) ? "enable" : "skip", because };
}
