/**
 * One row of the fault table: what a scenario declares (the fault, the
 * figure as filed, the fleet it needs) and the context it runs in — a fresh
 * rig, the ordinary traffic alongside, the gauges sampled, and marks for
 * when the fault began and ended, so the runner (run-scenario.ts) can say
 * what ordinary clients saw before and during it.
 */
import type { BackendEntry } from "../e2e/gateway";
import type { RequestRecord, RunClock } from "./clients";
import type { Rig } from "./rig";
import type { Sample } from "./samples";

export type Figure = number | string | boolean | null;

export interface ScenarioOutcome {
  /** One sentence for the table's "now" column. */
  readonly now: string;
  /** The scenario's own measurements (names say their units). */
  readonly figures: Readonly<Record<string, Figure>>;
}

export interface ScenarioContext {
  readonly rig: Rig;
  readonly clock: RunClock;
  readonly log: (line: string) => void;
  /** Gauges so far (the runner samples every SAMPLE_MS). */
  readonly samples: readonly Sample[];
  /** Starts `n` closed-loop ordinary streams (the runner starts the scenario's background). */
  startTraffic(n: number): void;
  /** Stops every ordinary stream, letting each finish its request. */
  stopTraffic(): Promise<void>;
  /** Ordinary streams in flight right now. */
  inflight(): number;
  /** Ordinary records so far. */
  ordinary(): readonly RequestRecord[];
  /** The fault began / was lifted now (default: when run() starts / returns). */
  mark(what: "fault" | "clear"): void;
  /** One request with its own id (a unique body per call unless given). */
  send(opts: { body?: string; id: string; timeoutMs?: number; signal?: AbortSignal }): Promise<RequestRecord>;
  sleep(ms: number): Promise<void>;
}

export interface Scenario {
  readonly id: string;
  /** The fault, as the table names it. */
  readonly fault: string;
  /** What it did before the fix, as filed. */
  readonly asFiled: string;
  /** Ordinary streams running alongside from the start (default 20; 0: the scenario starts its own). */
  readonly background?: number;
  /** Emulators to start (default 4). */
  readonly emulators?: number;
  /** BACKENDS from the emulators' urls (default one `emu-<i>` per emulator). */
  readonly entries?: (urls: readonly string[]) => BackendEntry[];
  /** Inflicts the fault (after a baseline of ordinary traffic) and measures what is its own. */
  run(ctx: ScenarioContext): Promise<ScenarioOutcome>;
}

/** The last sample at or before `tMs` that has pool stats. */
export function statsAt(samples: readonly Sample[], tMs: number): Sample | undefined {
  let best: Sample | undefined;
  for (const s of samples) if (s.tMs <= tMs && s.usage !== undefined) best = s;
  return best;
}

/** The first sample after `fromMs` whose backend `id` satisfies `pred`. */
export function firstWhen(
  samples: readonly Sample[],
  fromMs: number,
  id: string,
  pred: (b: NonNullable<Sample["backends"]>[number]) => boolean,
): Sample | undefined {
  return samples.find((s) => s.tMs >= fromMs && s.backends?.some((b) => b.id === id && pred(b)) === true);
}
