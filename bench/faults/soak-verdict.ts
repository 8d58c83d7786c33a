/**
 * The soak's pass criteria, as a pure function of what was recorded:
 * 1. no request failed, except streams that were in flight on the flapping
 *    backend at the instant it was killed — and each of those ended with an
 *    SSE error event;
 * 2. no stream ended broken (a raw truncation or transport error);
 * 3. no lease left in the RouterDO once clients stopped and a settle passed;
 * 4. memory flat (flatness.ts);
 * 5. the faults really happened (kills and 429s), so a pass is not vacuous.
 */
import type { RequestRecord } from "./clients";
import type { Ending } from "./ending";
import type { MemoryVerdict } from "./flatness";

export interface Kill {
  readonly backend: string;
  /** ms since the run's start, taken just before stop(). */
  readonly atMs: number;
}

export interface Criterion {
  readonly name: string;
  readonly pass: boolean;
  readonly detail: string;
}

export interface SoakVerdict {
  readonly pass: boolean;
  readonly criteria: readonly Criterion[];
  readonly endings: Readonly<Record<Ending, number>>;
  /** error-event endings of streams cut by a kill. */
  readonly excusedCuts: number;
  /** Records that count as failures (all but done and excused cuts). */
  readonly failures: readonly RequestRecord[];
}

export interface SoakVerdictInput {
  readonly records: readonly RequestRecord[];
  readonly kills: readonly Kill[];
  /** 429 answers the throttling backend sent (its emulator's count). */
  readonly throttles: number;
  /** RouterDO leases after the settle; undefined when /healthz could not say. */
  readonly finalLeases: number | undefined;
  readonly memory: MemoryVerdict;
}

/** Whether a record's stream was in flight on its backend when that backend was killed. */
export function inFlightAtKill(r: RequestRecord, kills: readonly Kill[]): boolean {
  return kills.some((k) => k.backend === r.backend && r.startMs <= k.atMs && r.endMs >= k.atMs);
}

export function judgeSoak(input: SoakVerdictInput): SoakVerdict {
  const endings: Record<Ending, number> = { done: 0, error_event: 0, http_error: 0, broken: 0 };
  const failures: RequestRecord[] = [];
  let excusedCuts = 0;
  for (const r of input.records) {
    endings[r.ending]++;
    if (r.ending === "done") continue;
    if (r.ending === "error_event" && inFlightAtKill(r, input.kills)) excusedCuts++;
    else failures.push(r);
  }
  const n = input.records.length;
  const criteria: Criterion[] = [
    {
      name: "no failed request but streams cut by a kill, each with an error event",
      pass: failures.length === 0 && n > 0,
      detail: `${n} requests: ${endings.done} [DONE], ${excusedCuts} cut by a kill with an error event, ${failures.length} other failures`,
    },
    {
      name: "no broken stream (raw truncation or transport error)",
      pass: endings.broken === 0,
      detail: `${endings.broken} broken`,
    },
    {
      name: "no lease left after the clients stopped",
      pass: input.finalLeases === 0,
      detail: `${input.finalLeases ?? "unknown"} leases`,
    },
    { name: "memory flat", pass: input.memory.pass, detail: input.memory.detail },
    {
      name: "the faults happened",
      pass: input.kills.length > 0 && input.throttles > 0,
      detail: `${input.kills.length} kills, ${input.throttles} answers of 429`,
    },
  ];
  return { pass: criteria.every((c) => c.pass), criteria, endings, excusedCuts, failures };
}
