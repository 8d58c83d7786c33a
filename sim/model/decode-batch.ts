/**
 * The decoding sequences of one engine: who finishes first, and how much
 * context they hold, without touching each sequence every step.
 *
 * The engine counts its steps; every decoding sequence gains one token per
 * step (vLLM schedules each running decode before any prefill chunk, see
 * engine-model.ts), so a sequence that produced its first token at step s
 * finishes at step s + outputTokens − 1, and that never moves. The context
 * of the whole batch at step g is the sum of prompts plus 1 + g − s per
 * sequence, kept as two running sums.
 */
import { Heap } from "../heap";

export interface Decoding {
  readonly promptTokens: number;
  /** Admission order: breaks finish ties. */
  readonly seq: number;
  /** Engine step at whose end the first token came out. */
  startStep: number;
  /** Engine step at whose end the last token comes out. */
  finishStep: number;
}

function finishesFirst(a: Decoding, b: Decoding): boolean {
  return a.finishStep < b.finishStep || (a.finishStep === b.finishStep && a.seq < b.seq);
}

export class DecodeBatch<T extends Decoding> {
  private readonly heap = new Heap<T>(finishesFirst);
  private promptSum = 0;
  private startSum = 0;

  get size(): number {
    return this.heap.size;
  }

  /** Makes this batch a copy of `src`, each sequence mapped by `map` (to its copy). */
  copyFrom(src: DecodeBatch<T>, map: (r: T) => T): void {
    this.heap.copyFrom(src.heap, map);
    this.promptSum = src.promptSum;
    this.startSum = src.startSum;
  }

  /** Restores the finish order after finish steps were changed in place (EngineModel.reviseOutputs). */
  reorder(): void {
    const all: T[] = [];
    for (let r = this.heap.pop(); r !== undefined; r = this.heap.pop()) all.push(r);
    for (const r of all) this.heap.push(r);
  }

  /** The sequence that finishes first. */
  peek(): T | undefined {
    return this.heap.peek();
  }

  add(r: T): void {
    this.heap.push(r);
    this.promptSum += r.promptTokens;
    this.startSum += r.startStep;
  }

  /** Takes out the sequence that finishes first. */
  pop(): T | undefined {
    const r = this.heap.pop();
    if (r !== undefined) this.forget(r);
    return r;
  }

  /** Takes out one sequence (an abort). */
  remove(r: T): void {
    if (this.heap.remove(r)) this.forget(r);
  }

  /** Tokens of K/V the batch reads in step `step`: prompts plus the tokens generated so far. */
  context(step: number): number {
    const n = this.heap.size;
    return n > 0 ? this.promptSum + n * (1 + step) - this.startSum : 0;
  }

  private forget(r: T): void {
    this.promptSum -= r.promptTokens;
    this.startSum -= r.startStep;
    if (this.heap.size === 0) {
      // Integers throughout, but keep the sums exact across busy periods anyway.
      this.promptSum = 0;
      this.startSum = 0;
    }
  }
}
