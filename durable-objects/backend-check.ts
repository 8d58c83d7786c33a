/**
 * The RouterDO's backend check (BACKEND_CHECK_SECONDS): each backend's `GET
 * /v1/models` (src/worker/backend-check/models-check.ts), so the operator
 * sees a backend that cannot serve the pool's requests — unreachable, a url
 * path the server does not serve, a key it refuses, another model name —
 * before clients do: on /healthz (with the admin token), on the dashboard,
 * and in one log line per change of a backend's state.
 *
 * When: a backend is checked as soon as this object learns of it (its spec
 * applied: the pool's first request, a fleet change, a restart), then every
 * interval while the pool routes; after an interval without a route call
 * the checks stop, and the next route call starts them again. The DO's one
 * alarm runs the rounds (nextAt() is one of its deadlines), never a route
 * call.
 *
 * Report only: nothing here reaches routing. A failed or slow check changes
 * nothing but what is shown. Bounds: CHECK_CONCURRENCY at a time, each
 * within CHECK_DEADLINE_MS and CHECK_MAX_BYTES. What it remembers is in
 * memory: a restarted object checks again at its first route call (and logs
 * a state that is not ok again, once).
 */
import { type BackendCheck, checkBackendModels } from "../src/worker/backend-check/models-check";
import type { BackendCheckStatus } from "../src/worker/router/router-rpc";
import { eachAtMost } from "./at-most";

/** A check (connect, headers, body) must end within this, ms. */
export const CHECK_DEADLINE_MS = 2000;
/** Body bytes read at most: a model list is a few hundred bytes. */
export const CHECK_MAX_BYTES = 64 * 1024;
/** Checks in flight at once within a round (a Worker invocation keeps six connections open at once). */
export const CHECK_CONCURRENCY = 6;

export interface CheckTarget {
  readonly id: string;
  readonly url: string;
  /** The backend's BACKENDS apiKey, sent as requests send it. */
  readonly apiKey?: string;
}

/** A state-change line and its level (warn: a problem, console.warn; info: over, console.log). */
export type CheckLog = (line: string, level: "warn" | "info") => void;

export class BackendChecker {
  private intervalMs = 0;
  private model: string | undefined;
  private targets: readonly CheckTarget[] = [];
  private readonly results = new Map<string, BackendCheck>();
  /** Backends not yet checked at their present url (new, moved, or the model changed). */
  private readonly unchecked = new Set<string>();
  private uncheckedSince = Number.NEGATIVE_INFINITY;
  private lastRoutedAt = Number.NEGATIVE_INFINITY;
  private lastRoundAt = Number.NEGATIVE_INFINITY;
  private inRound = false;
  private rounds = 0;

  /**
   * @param fetcher the runtime's fetch (tests pass their own)
   * @param clock epoch ms
   * @param log where the state-change lines go (the console: wrangler dev's terminal, wrangler tail, Workers Logs)
   */
  constructor(
    private readonly fetcher: typeof fetch = (input, init) => fetch(input, init),
    private readonly clock: () => number = Date.now,
    private readonly log: CheckLog = (line, level) =>
      level === "warn" ? console.warn(line) : console.log(line),
  ) {}

  /** The pool's interval (0: off), model and backends; a backend new or moved is due at once. */
  configure(intervalSeconds: number, model: string | undefined, targets: readonly CheckTarget[]): void {
    const was = new Map(this.targets.map((t) => [t.id, t.url]));
    // Switched on, or a new model to look for: every backend is a new question.
    const fresh = model !== this.model || (this.intervalMs <= 0 && intervalSeconds > 0);
    this.intervalMs = intervalSeconds * 1000;
    this.model = model;
    this.targets = [...targets];
    const ids = new Set(this.targets.map((t) => t.id));
    for (const id of [...this.results.keys()]) if (!ids.has(id)) this.results.delete(id);
    for (const id of [...this.unchecked]) if (!ids.has(id)) this.unchecked.delete(id);
    const now = this.clock();
    for (const t of this.targets) {
      if (!fresh && was.get(t.id) === t.url) continue;
      // Another server (or another question): what we knew of the old one says nothing.
      if (was.get(t.id) !== t.url) this.results.delete(t.id);
      if (this.unchecked.size === 0) this.uncheckedSince = now;
      this.unchecked.add(t.id);
    }
  }

  /** The pool routed a request: the checks go on while it does. */
  routed(now: number): void {
    this.lastRoutedAt = now;
  }

  /** When the next round is due; undefined when off, or idle (nothing routed since the last round). */
  nextAt(): number | undefined {
    if (this.intervalMs <= 0 || this.targets.length === 0) return undefined;
    if (this.unchecked.size > 0) return this.uncheckedSince;
    if (this.lastRoutedAt <= this.lastRoundAt) return undefined;
    // Never a non-finite alarm time (a round never run): due at the route call.
    if (!Number.isFinite(this.lastRoundAt)) return this.lastRoutedAt;
    return this.lastRoundAt + this.intervalMs;
  }

  due(now: number): boolean {
    const next = this.nextAt();
    return !this.inRound && next !== undefined && now >= next;
  }

  /** One round: every backend's /v1/models, CHECK_CONCURRENCY at a time. */
  async run(now: number): Promise<void> {
    if (this.inRound) return;
    this.inRound = true;
    this.lastRoundAt = now;
    const model = this.model;
    try {
      await eachAtMost(this.targets, CHECK_CONCURRENCY, (t) => this.check(t, model));
    } finally {
      this.rounds++;
      this.inRound = false;
    }
  }

  /** What the checks found, for the pool's stats (/healthz) and snapshot (the dashboard). */
  status(): BackendCheckStatus {
    return {
      intervalSeconds: this.intervalMs / 1000,
      rounds: this.rounds,
      backends: Object.fromEntries(this.results),
    };
  }

  /** A backend's latest check, when it has one. */
  result(id: string): BackendCheck | undefined {
    return this.results.get(id);
  }

  private async check(t: CheckTarget, model: string | undefined): Promise<void> {
    const r = await checkBackendModels(t.url, model, {
      deadlineMs: CHECK_DEADLINE_MS,
      maxBytes: CHECK_MAX_BYTES,
      fetch: this.fetcher,
      clock: this.clock,
      ...(t.apiKey !== undefined ? { apiKey: t.apiKey } : {}),
    });
    // The backend may have left the pool, or moved, or the model changed, while we waited.
    if (!this.targets.some((x) => x.id === t.id && x.url === t.url) || model !== this.model) return;
    const before = this.results.get(t.id);
    this.results.set(t.id, r);
    this.unchecked.delete(t.id);
    if (stateKey(before) !== stateKey(r) && !(before === undefined && r.state === "ok"))
      this.log(changeLine(model, t.id, before, r), r.state === "ok" ? "info" : "warn");
  }
}

/** What counts as a change of state: the state, and the status within it (a 404 that becomes a 500). */
function stateKey(c: BackendCheck | undefined): string {
  return c === undefined ? "unchecked" : `${c.state}:${c.status ?? ""}`;
}

/** One JSON line (as the request lines are), `level` warn for a problem, info when it is over. */
function changeLine(
  model: string | undefined,
  id: string,
  before: BackendCheck | undefined,
  r: BackendCheck,
): string {
  return JSON.stringify({
    msg: "backend_check",
    level: r.state === "ok" ? "info" : "warn",
    ...(model !== undefined ? { model } : {}),
    backend: id,
    state: r.state,
    was: before?.state ?? "unchecked",
    ...(r.status !== undefined ? { status: r.status } : {}),
    ...(r.model !== undefined ? { modelVerdict: r.model } : {}),
    ...(r.listed !== undefined ? { listed: r.listed } : {}),
    ...(r.detail !== undefined ? { detail: r.detail } : {}),
  });
}
