// The step that computed each request's last prompt token, read from inside the engine model's step plan.
// Shared by the burst audits (burst-tail/audit.ts, first-prefill/collide.ts): they wrap EngineModel.plan to
// see which requests shared a step, which no report field holds.
import type { EngineModel } from "../../../sim/model/engine-model";

/** What the audits read from an engine between its plan and its run (private fields, hence the cast). */
interface EngineInsideStep {
  runStart: number;
  runEnd: number;
  scheduler: { chunked: { id: string; computed: number; promptTokens: number; hitBlocks: number }[] };
  plan(prefillTokens: number): void;
}

/** Per request (indexed by its numeric id): admission and the step that finished its prompt. */
export interface StepRecord {
  /** When the engine first gave it a prompt chunk (ms, absolute), and the blocks it found cached then. */
  admitMs: number;
  hitBlocks: number;
  /** The step that computed its last prompt token: start, end, prefill tokens, and the requests in it. */
  stepStart: number;
  stepEnd: number;
  stepPrefill: number;
  stepIds: number[];
}

/** A record before the engine has seen the request. */
export function emptyStepRecord(): StepRecord {
  return { admitMs: Number.NaN, hitBlocks: 0, stepStart: Number.NaN, stepEnd: Number.NaN, stepPrefill: 0, stepIds: [] };
}

/** A hook for simulatePolicy's `routed` callback: wraps every engine's plan once, filling `recs`. */
export function stepRecorder(recs: readonly StepRecord[]): (engines: readonly EngineModel[]) => void {
  let hooked = false;
  return (engines) => {
    if (hooked) return;
    hooked = true;
    for (const e of engines) {
      const x = e as unknown as EngineInsideStep;
      const plan = x.plan.bind(x);
      x.plan = (prefillTokens: number) => {
        plan(prefillTokens);
        const chunked = x.scheduler.chunked;
        if (chunked.length === 0) return;
        const ids = chunked.map((c) => Number(c.id));
        for (const c of chunked) {
          const rec = recs[Number(c.id)]!;
          if (Number.isNaN(rec.admitMs)) {
            rec.admitMs = x.runStart;
            rec.hitBlocks = c.hitBlocks;
          }
          if (c.computed === c.promptTokens) {
            rec.stepStart = x.runStart;
            rec.stepEnd = x.runEnd;
            rec.stepPrefill = prefillTokens;
            rec.stepIds = ids;
          }
        }
      };
    }
  };
}
