/**
 * Our in-flight requests that joined a prefix a backend was still computing
 * when they were routed there (a burst's later requests at the home of its
 * document), each with the predicted end of that prefill: until then they
 * wait in the engine's queue, and all of them are scheduled at the same step
 * boundary, when the prefix's blocks are there to reuse (vLLM V1 reuses a
 * block from the step that schedules it; ../pending-prefill.ts).
 *
 * prefix_aware reads it to see what a new prefill does to them: a request that
 * reaches that backend before the boundary is scheduled in the same step, and
 * under chunked prefill a step's time follows all the tokens it carries, so
 * every joiner's first token waits for the newcomer's prefill too. A burst's
 * joiners then pay for the next burst's first prefill if it lands on their
 * backend (bench/results/policy-work.md, "Tail gaps").
 */

export class PrefixJoiners {
  /** Per backend: the predicted prefill end each joiner waits for (ms), with its id. */
  private byBackend: Map<number, number>[] = [];
  private nextId = 0;

  /** Forgets everything: the backend list changed, indices mean other backends. */
  reset(size: number): void {
    this.byBackend = Array.from({ length: size }, () => new Map<number, number>());
  }

  /** A request joined a prefix backend i computes until `until`; returns the id to remove it with. */
  add(i: number, until: number): number {
    const id = this.nextId++;
    this.byBackend[i]?.set(id, until);
    return id;
  }

  /** That request completed (or failed); a reset since then already forgot it. */
  remove(i: number, id: number): void {
    this.byBackend[i]?.delete(id);
  }

  /** Joiners on backend i still waiting at `now` for the prefill they joined. */
  waiting(i: number, now: number): number {
    const m = this.byBackend[i];
    if (m === undefined) return 0;
    let n = 0;
    for (const until of m.values()) if (until > now) n++;
    return n;
  }
}
