/**
 * The most reused prefixes, in bounded memory: the Space-Saving summary
 * (Metwally, Agrawal, El Abbadi, "Efficient Computation of Frequent and
 * Top-k Elements in Data Streams", ICDT 2005) over "the longest already-seen
 * prefix of a request", keyed by the chain key at its end. A system prompt
 * that opens a thousand conversations is counted a thousand times; the
 * growing history of one conversation, once per turn, each time a different
 * key.
 *
 * `capacity` counters. A prefix reused more than requests / capacity times
 * is always present, and each count overstates the truth by at most its
 * `overcount` (the counter it took over); both are reported. A preview of
 * the text is made once a prefix has been reused twice, from the request
 * that reuses it (only logs with text have one).
 */

export interface TopPrefix {
  /** The chain key where the prefix ends. */
  readonly key: number;
  /** Requests whose longest seen prefix it was (at most `overcount` too many). */
  readonly count: number;
  readonly overcount: number;
  /** Its length, tokens. */
  readonly tokens: number;
  readonly tenant: string;
  readonly preview?: string;
}

interface Counter {
  count: number;
  overcount: number;
  tokens: number;
  tenant: string;
  preview?: string;
}

export const DEFAULT_TOP_CAPACITY = 256;

export class TopPrefixes {
  private readonly counters = new Map<number, Counter>();

  constructor(readonly capacity = DEFAULT_TOP_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
  }

  /**
   * Counts one reuse of the prefix ending at `key`. `preview` is asked for
   * only when the prefix has been reused twice and has none yet.
   */
  add(key: number, tokens: number, tenant: string, preview?: () => string | undefined): void {
    let c = this.counters.get(key);
    if (c === undefined) {
      let overcount = 0;
      if (this.counters.size >= this.capacity) {
        let minKey = 0;
        let min: Counter | undefined;
        for (const [k, v] of this.counters)
          if (min === undefined || v.count < min.count) {
            min = v;
            minKey = k;
          }
        this.counters.delete(minKey);
        overcount = min!.count;
      }
      c = { count: overcount, overcount, tokens, tenant };
      this.counters.set(key, c);
    }
    c.count++;
    if (c.count >= 2 && c.preview === undefined && preview !== undefined) {
      const p = preview();
      if (p !== undefined) c.preview = p;
    }
  }

  /**
   * The `n` prefixes certainly reused by at least two requests that saved the
   * most tokens (guaranteed count × length), most first.
   */
  top(n: number): TopPrefix[] {
    const sure = (c: TopPrefix): number => c.count - c.overcount;
    return [...this.counters]
      .map(([key, c]) => ({ key, ...c }))
      .filter((c) => sure(c) >= 2)
      .sort((a, b) => sure(b) * b.tokens - sure(a) * a.tokens || sure(b) - sure(a) || a.key - b.key)
      .slice(0, n);
  }
}
