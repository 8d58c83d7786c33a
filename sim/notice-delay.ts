/**
 * When our router hears a request's first token and its end (FleetConfig.noticeDelay).
 *
 * The simulator's router otherwise hears both at the engine's instant. In production each travels
 * backend → Worker (the network between the GPU fleet and the Cloudflare PoP), then Worker → RouterDO:
 * the first token as its own `RouterDO.firstToken` call (router-client.ts noticeFirstToken), the lease's
 * end waiting up to REPORT_CARRY_MS for a route call of the isolate to carry it (complete-carry.ts) and
 * sent alone after that. The simulator decides each route at the request's arrival and submits it to
 * the engine at once, so its clock is the RouterDO's: a notice's delay here is the whole way back from
 * the engine to the object. (The way out, object → Worker → engine, only shifts when a prefill starts
 * against the ledger's prediction by a steady amount, which the learned overrun of first tokens takes
 * in; it is not modelled.)
 *
 * The delay of each notice is drawn independently: MEAN × a lognormal of log-σ SIGMA scaled to mean 1,
 * exp(σZ − σ²/2). A network hop's latency is positive and right-skewed (a floor and a tail: queueing,
 * retransmits), which a lognormal has and a uniform jitter does not; σ = 0 is a steady offset, the
 * case the learned overrun should absorb whole. The draws come from their own seeded stream, so the
 * router's own randomness is the same with and without a delay.
 *
 * A lease's end is never heard before its first token (it leaves the Worker after the first token's
 * notice); with CARRY > 0 it rides on the first route call that reaches the object at or after
 * engine end + its delay, if one comes within CARRY ms, else it is sent alone at end + delay + CARRY.
 * The route calls are all the fleet's arrivals, as if one isolate sent them all: the shortest wait
 * a carried report can have.
 */
import { Rng } from "./workloads/prng";

export interface NoticeDelay {
  /** Mean delay of one notice, ms (≥ 0). */
  readonly meanMs: number;
  /** Log-σ of the lognormal factor (≥ 0); 0: every notice is exactly meanMs late. */
  readonly sigma: number;
  /** REPORT_CARRY_MS: the longest a lease's end waits for a route call to carry it, ms (≥ 0). */
  readonly carryMs: number;
  /** Whether our router hears first tokens at all (false: the first-token hold never engages). */
  readonly firstTokens: boolean;
}

/** No delay, first tokens heard: the simulator as it was, notices delivered inline at the engine's instant. */
export const NO_NOTICE_DELAY: NoticeDelay = { meanMs: 0, sigma: 0, carryMs: 0, firstTokens: true };

/** True when notices are delivered as without the option (inline, at the engine's time). */
export function isInline(d: NoticeDelay | undefined): boolean {
  return d === undefined || (d.meanMs === 0 && d.carryMs === 0 && d.firstTokens);
}

/**
 * Parses `MEAN[:SIGMA[:CARRY]]` (ms, log-σ, ms), optionally followed by `,nofirst` (our router hears no
 * first token: the hold off, the rest as given). SIGMA defaults to 0, CARRY to 0.
 */
export function parseNoticeDelay(v: string): NoticeDelay {
  const m = /^([^:,]+)(?::([^:,]+))?(?::([^:,]+))?(,nofirst)?$/.exec(v.trim());
  if (m === null)
    throw new RangeError(`expected MEAN[:SIGMA[:CARRY]][,nofirst] (ms, log-sigma, ms), got "${v}"`);
  const num = (s: string | undefined, what: string, max: number): number => {
    if (s === undefined) return 0;
    const x = Number(s);
    if (!Number.isFinite(x) || x < 0 || x > max)
      throw new RangeError(`${what} must be a number in 0..${max}, got "${s}"`);
    return x;
  };
  return {
    meanMs: num(m[1], "MEAN", 10_000),
    sigma: num(m[2], "SIGMA", 3),
    carryMs: num(m[3], "CARRY", 1000),
    firstTokens: m[4] === undefined,
  };
}

/** The delay in words, for reports. */
export function noticeDelayText(d: NoticeDelay | undefined): string {
  if (d === undefined || isInline(d)) return "at the engine's instant";
  const parts = [`mean ${d.meanMs} ms`];
  if (d.sigma > 0) parts.push(`lognormal σ ${d.sigma}`);
  else parts.push("steady");
  if (d.carryMs > 0) parts.push(`lease end carried ≤ ${d.carryMs} ms`);
  if (!d.firstTokens) parts.push("no first tokens heard");
  return parts.join(", ");
}

/** Seeded draws of one notice's delay. */
export class NoticeDelays {
  private readonly rng: Rng;
  /** A second standard normal from the last Box–Muller pair. */
  private spare: number | undefined;

  constructor(
    private readonly d: NoticeDelay,
    seed: number,
    label: string,
  ) {
    this.rng = new Rng(seed).fork(`notice-delay/${label}`);
  }

  draw(): number {
    if (this.d.meanMs === 0) return 0;
    if (this.d.sigma === 0) return this.d.meanMs;
    const s = this.d.sigma;
    return this.d.meanMs * Math.exp(s * this.normal() - (s * s) / 2);
  }

  private normal(): number {
    if (this.spare !== undefined) {
      const z = this.spare;
      this.spare = undefined;
      return z;
    }
    const u = 1 - this.rng.next(); // (0, 1]
    const v = this.rng.next();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }
}

/** A notice waiting for its time: earliest first, and in the order they were queued on a tie. */
export interface Notice<T> {
  readonly at: number;
  readonly seq: number;
  readonly item: T;
}

/** A binary min-heap of notices by (at, seq). */
export class NoticeQueue<T> {
  private readonly heap: Notice<T>[] = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  /** When the earliest notice is due; +∞ when none waits. */
  get nextAt(): number {
    return this.heap.length > 0 ? this.heap[0]!.at : Number.POSITIVE_INFINITY;
  }

  push(at: number, item: T): void {
    const h = this.heap;
    h.push({ at, seq: this.seq++, item });
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  pop(): Notice<T> | undefined {
    const h = this.heap;
    if (h.length === 0) return undefined;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l]!, h[m]!)) m = l;
        if (r < h.length && before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}

function before<T>(a: Notice<T>, b: Notice<T>): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/**
 * When a lease's end ends up at the object: engine end + `delayMs`, carried by the first route call that
 * reaches the object then or within `carryMs` after (`arrivals`, sorted; `from` is the first index still to
 * come), else alone at end + delay + carry; never before `notBefore` (its first token's notice).
 */
export function completionAt(
  endMs: number,
  delayMs: number,
  carryMs: number,
  arrivals: (i: number) => number,
  from: number,
  count: number,
  notBefore: number,
): number {
  const ready = endMs + delayMs;
  let at = ready + carryMs;
  if (carryMs > 0) {
    // First arrival ≥ ready, by bisection over [from, count).
    let lo = from;
    let hi = count;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (arrivals(mid) < ready) lo = mid + 1;
      else hi = mid;
    }
    if (lo < count) at = Math.min(at, arrivals(lo));
  }
  return Math.max(at, notBefore);
}
