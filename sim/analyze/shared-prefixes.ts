/**
 * How much of the prompt traffic repeats a prefix already seen, as an
 * unbounded cache shared by the whole fleet would serve it: a request
 * reuses its longest prefix whose chain key an earlier request (in input
 * order) produced. Overall, per tenant (tenants' chains are seeded apart,
 * so they never share), as a distribution of shared-prefix lengths, and the
 * prefixes reused most.
 *
 * Memory is bounded: the seen keys live in a RecentKeySet (exact until it
 * holds its capacity of keys; past it, reuse from farther back than that
 * many distinct keys may go uncounted, a lower bound the report states),
 * tenants in at most `maxTenants` rows (later ones are summed as "(other)"),
 * top prefixes in a Space-Saving summary. Nothing is kept per request.
 */
import { type KeyedRequest, tokensAt } from "./keyed-request";
import { redactedPreview } from "./preview";
import { RecentKeySet } from "./recent-key-set";
import { type TopPrefix, TopPrefixes } from "./top-prefixes";

/** Lower bounds (tokens) of the shared-prefix length buckets; the last is open. */
export const LENGTH_BUCKETS = [0, 1, 256, 1024, 4096, 16384, 65536] as const;
export const DEFAULT_MAX_TENANTS = 10_000;
export const OTHER_TENANTS = "(other)";

export interface SharedPrefixOptions {
  /** Memory cap of the seen-key table, bytes. */
  readonly tableBytes: number;
  readonly maxTenants?: number;
  readonly topCapacity?: number;
}

export interface TenantShare {
  /** Fingerprint, "" for requests without a tenant key, or OTHER_TENANTS. */
  readonly tenant: string;
  readonly requests: number;
  readonly promptTokens: number;
  readonly sharedTokens: number;
  readonly share: number;
}

export interface LengthBucket {
  readonly fromTokens: number;
  /** Exclusive; absent for the last bucket. */
  readonly toTokens?: number;
  readonly requests: number;
}

export interface SharedPrefixReport {
  readonly requests: number;
  readonly promptTokens: number;
  /** Prompt tokens in prefixes already seen (a lower bound once the key set has rotated). */
  readonly sharedTokens: number;
  readonly share: number;
  readonly requestsWithSharedPrefix: number;
  readonly lengths: readonly LengthBucket[];
  /** Tenants by prompt tokens, most first. */
  readonly tenants: readonly TenantShare[];
  readonly tenantCount: number;
  readonly top: readonly TopPrefix[];
  readonly keyTable: {
    /** Every key ever seen is remembered: the share is exact. */
    readonly exact: boolean;
    /** Keys remembered for sure after their last use (the reuse horizon once not exact). */
    readonly capacity: number;
    readonly keys: number;
    readonly bytes: number;
    readonly maxBytes: number;
  };
}

interface TenantRow {
  requests: number;
  promptTokens: number;
  sharedTokens: number;
}

function bucketOf(tokens: number): number {
  let b = 0;
  while (b + 1 < LENGTH_BUCKETS.length && tokens >= LENGTH_BUCKETS[b + 1]!) b++;
  return b;
}

export class SharedPrefixes {
  private readonly seen: RecentKeySet;
  private readonly topPrefixes: TopPrefixes;
  private readonly tenants = new Map<string, TenantRow>();
  private readonly maxTenants: number;
  private readonly lengthCounts = new Array<number>(LENGTH_BUCKETS.length).fill(0);
  private requests = 0;
  private promptTokens = 0;
  private sharedTokens = 0;
  private withShared = 0;

  constructor(private readonly opts: SharedPrefixOptions) {
    this.seen = new RecentKeySet(opts.tableBytes);
    this.topPrefixes = new TopPrefixes(opts.topCapacity);
    this.maxTenants = opts.maxTenants ?? DEFAULT_MAX_TENANTS;
  }

  add(r: KeyedRequest): void {
    const { keys } = r;
    // Seen keys form a prefix of the chain: walk it while they were, then record the rest.
    let deepest = -1;
    let j = 0;
    while (j < keys.length && this.seen.touch(keys[j]!)) deepest = j++;
    for (; j < keys.length; j++) this.seen.touch(keys[j]!);
    const shared = deepest >= 0 ? tokensAt(r, deepest) : 0;

    this.requests++;
    this.promptTokens += r.promptTokens;
    this.sharedTokens += shared;
    const row = this.tenantRow(r.tenant);
    row.requests++;
    row.promptTokens += r.promptTokens;
    row.sharedTokens += shared;
    this.lengthCounts[bucketOf(shared)]!++;
    if (deepest < 0) return;
    this.withShared++;
    const text = r.prefixText;
    this.topPrefixes.add(
      keys[deepest]!,
      shared,
      r.tenant,
      text === undefined ? undefined : () => redactedPreview(text(shared)),
    );
  }

  private tenantRow(tenant: string): TenantRow {
    let row = this.tenants.get(tenant);
    if (row === undefined) {
      const key = this.tenants.size < this.maxTenants ? tenant : OTHER_TENANTS;
      row = this.tenants.get(key);
      if (row === undefined) {
        row = { requests: 0, promptTokens: 0, sharedTokens: 0 };
        this.tenants.set(key, row);
      }
    }
    return row;
  }

  report(topN: number): SharedPrefixReport {
    const share = (shared: number, prompt: number): number => (prompt > 0 ? shared / prompt : 0);
    return {
      requests: this.requests,
      promptTokens: this.promptTokens,
      sharedTokens: this.sharedTokens,
      share: share(this.sharedTokens, this.promptTokens),
      requestsWithSharedPrefix: this.withShared,
      lengths: LENGTH_BUCKETS.map((from, b) => ({
        fromTokens: from,
        ...(b + 1 < LENGTH_BUCKETS.length ? { toTokens: LENGTH_BUCKETS[b + 1]! } : {}),
        requests: this.lengthCounts[b]!,
      })),
      tenants: [...this.tenants]
        .map(([tenant, t]) => ({ tenant, ...t, share: share(t.sharedTokens, t.promptTokens) }))
        .sort((a, b) => b.promptTokens - a.promptTokens || a.tenant.localeCompare(b.tenant))
        .slice(0, topN),
      tenantCount: this.tenants.size,
      top: this.topPrefixes.top(topN),
      keyTable: {
        exact: this.seen.exact,
        capacity: this.seen.capacity,
        keys: this.seen.size,
        bytes: this.seen.bytes,
        maxBytes: this.opts.tableBytes,
      },
    };
  }
}
