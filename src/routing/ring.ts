/**
 * Weighted consistent hashing with virtual nodes, and the key-seeded probe
 * sequence that bounded loads walk when a backend is full.
 *
 * Virtual nodes: backend i gets max(1, round(VNODES_PER_MEAN_WEIGHT · w_i / w̄))
 * points, w̄ the mean configured weight. With equal weights that is 256 each,
 * whatever N is, so adding or removing a backend moves only the arcs of that
 * backend (~1/N of keys). 256 points give a share whose relative spread is
 * about 1/√256 ≈ 6% (libketama uses 160 per server for the same reason).
 *
 * Probe order of a key: its ring home, then the owners of rehash(key, 1),
 * rehash(key, 2), … skipping backends already seen, then (after 4N rehashes)
 * the remaining owners clockwise. Mirrokni, Thorup and Zadimoghaddam
 * ("Consistent Hashing with Bounded Loads", SODA 2018) forward a ball
 * clockwise to the next bin with room; we rehash instead, because with
 * successors every key whose home is full lands on the same neighbour and
 * the overflow cascades around the ring. Each rehash lands on a backend with
 * probability ≈ its weight share, so a hot key's second home is chosen
 * weighted, and every replica computes the same order.
 */
import { hashKey, hashString } from "./hash";
import type { BlockKey } from "./types";

export const VNODES_PER_MEAN_WEIGHT = 256;

export interface RingMember {
  readonly id: string;
  readonly weight: number;
}

export class HashRing {
  readonly size: number;
  private readonly points: Uint32Array;
  private readonly owners: Int32Array;
  private readonly vnodes: Int32Array;
  /** Epoch marks instead of a cleared Set: probing allocates nothing. */
  private readonly seen: Uint32Array;
  private epoch = 0;

  constructor(members: readonly RingMember[], vnodesPerMeanWeight = VNODES_PER_MEAN_WEIGHT) {
    this.size = members.length;
    this.vnodes = new Int32Array(members.length);
    this.seen = new Uint32Array(members.length);
    let sum = 0;
    for (const m of members) sum += m.weight;
    const mean = members.length > 0 ? sum / members.length : 1;
    let total = 0;
    for (let i = 0; i < members.length; i++) {
      const count = Math.max(1, Math.round((vnodesPerMeanWeight * members[i]!.weight) / mean));
      this.vnodes[i] = count;
      total += count;
    }
    const raw = new Float64Array(total);
    const rawOwner = new Int32Array(total);
    let k = 0;
    for (let i = 0; i < members.length; i++) {
      const id = members[i]!.id;
      for (let j = 0; j < this.vnodes[i]!; j++) {
        raw[k] = hashString(id, j);
        rawOwner[k] = i;
        k++;
      }
    }
    // Sort by point, then by id, so two routers with the same fleet build the same ring
    // even when two points collide.
    const order = Array.from({ length: total }, (_, x) => x);
    order.sort((a, b) => {
      const d = raw[a]! - raw[b]!;
      if (d !== 0) return d;
      const ia = members[rawOwner[a]!]!.id;
      const ib = members[rawOwner[b]!]!.id;
      return ia < ib ? -1 : ia > ib ? 1 : 0;
    });
    this.points = new Uint32Array(total);
    this.owners = new Int32Array(total);
    for (let x = 0; x < total; x++) {
      this.points[x] = raw[order[x]!]!;
      this.owners[x] = rawOwner[order[x]!]!;
    }
  }

  /** Virtual nodes of member i. */
  vnodeCount(i: number): number {
    return this.vnodes[i] ?? 0;
  }

  /** The member that owns `key` (its ring home), or -1 on an empty ring. */
  primary(key: BlockKey): number {
    if (this.size === 0) return -1;
    return this.owners[this.slotOf(hashKey(key, 0))]!;
  }

  /**
   * The first member in the key's probe order for which `accept` holds, and its
   * rank in that order (0 = ring home). `{ index: -1 }` when none accepts.
   */
  probe(key: BlockKey, accept: (i: number) => boolean): { index: number; rank: number } {
    const epoch = this.nextEpoch();
    let rank = 0;
    const maxRehash = 4 * this.size;
    for (let a = 0; a <= maxRehash && rank < this.size; a++) {
      const i = this.owners[this.slotOf(hashKey(key, a))]!;
      if (this.seen[i] === epoch) continue;
      this.seen[i] = epoch;
      if (accept(i)) return { index: i, rank };
      rank++;
    }
    if (rank < this.size) {
      // Rare: rehashes kept hitting seen members. Finish deterministically, clockwise from home.
      const start = this.slotOf(hashKey(key, 0));
      for (let s = 0; s < this.points.length && rank < this.size; s++) {
        const i = this.owners[(start + s) % this.points.length]!;
        if (this.seen[i] === epoch) continue;
        this.seen[i] = epoch;
        if (accept(i)) return { index: i, rank };
        rank++;
      }
    }
    return { index: -1, rank };
  }

  /** The whole probe order of `key`: out[r] = member at rank r. */
  order(key: BlockKey): Int32Array {
    const out = new Int32Array(this.size);
    let r = 0;
    this.probe(key, (i) => {
      out[r++] = i;
      return false;
    });
    return out;
  }

  /** rank[i] = position of member i in the key's probe order. */
  ranks(key: BlockKey): Int32Array {
    const order = this.order(key);
    const rank = new Int32Array(this.size);
    for (let r = 0; r < order.length; r++) rank[order[r]!] = r;
    return rank;
  }

  private nextEpoch(): number {
    this.epoch = (this.epoch + 1) >>> 0;
    if (this.epoch === 0) {
      this.seen.fill(0);
      this.epoch = 1;
    }
    return this.epoch;
  }

  /** Index of the first point ≥ h, wrapping to 0. */
  private slotOf(h: number): number {
    const p = this.points;
    let lo = 0;
    let hi = p.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (p[mid]! < h) lo = mid + 1;
      else hi = mid;
    }
    return lo === p.length ? 0 : lo;
  }
}
