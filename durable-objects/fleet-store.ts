/**
 * What a RouterDO keeps durably, in its SQLite storage: the pool spec it
 * routes over (backends with urls, never apiKeys) and the health rows of
 * backends that are not simply "in rotation, no faults". A health row is
 * keyed by backend id AND url: a backend id pointed at a new address is a
 * different server and starts with a clean record.
 *
 * The affinity index is deliberately NOT stored: it is a belief rebuilt
 * from traffic within seconds, and persisting it per request would cost a
 * write on the hot path. Health is written only when it changes state
 * (ejection, restoration, a probe), never per request.
 *
 * The /admin/stats figures (counters, latency sketches: SavedCounters) are
 * one JSON row, rewritten by the object's alarm at most every STATS_SAVE_MS
 * when they changed, so an evicted or restarted object goes on counting
 * from them. Bounded: fixed counters, four sketches of at most
 * SKETCH_BIN_LIMIT bins, a counter per backend id the pool has routed to.
 */
import type { HealthRow } from "../src/routing";
import type { PoolSpec, UsageTotals } from "../src/worker/router/router-rpc";
import type { ArmSnapshot, ShadowSnapshot } from "../src/worker/stats/pool-snapshot";

/** What a RouterDO's counters were when last saved. */
export interface SavedCounters {
  /** The router options the arms' figures were counted under (figures of other arms are dropped). */
  readonly optionsKey: string;
  readonly usage: UsageTotals;
  readonly arms: readonly ArmSnapshot[];
  readonly shadow?: ShadowSnapshot;
  /** When these figures were first counted (epoch ms): the "since" of /admin/stats. */
  readonly since: number;
}

type MetaRow = { value: string } & Record<string, SqlStorageValue>;
type HealthSqlRow = { id: string; url: string; row: string } & Record<string, SqlStorageValue>;

export class FleetStore {
  constructor(private readonly sql: SqlStorage) {}

  /** Creates the schema; idempotent, run once per instance inside blockConcurrencyWhile. */
  migrate(): void {
    this.sql.exec(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    // The first schema kept health by id alone, with first-strike semantics: nothing in it carries over.
    this.sql.exec(`DROP TABLE IF EXISTS health`);
    this.sql.exec(
      `CREATE TABLE IF NOT EXISTS backend_health (
         id TEXT PRIMARY KEY,
         url TEXT NOT NULL,
         row TEXT NOT NULL
       )`,
    );
  }

  loadSpec(): { version: string; spec: PoolSpec } | undefined {
    const rows = this.sql
      .exec<MetaRow>(`SELECT value FROM meta WHERE key IN ('version', 'spec') ORDER BY key DESC`)
      .toArray();
    // ORDER BY key DESC → 'version' then 'spec'.
    if (rows.length !== 2) return undefined;
    return { version: rows[0]!.value, spec: JSON.parse(rows[1]!.value) as PoolSpec };
  }

  saveSpec(version: string, spec: PoolSpec): void {
    this.sql.exec(
      `INSERT OR REPLACE INTO meta (key, value) VALUES ('version', ?), ('spec', ?)`,
      version,
      JSON.stringify(spec),
    );
  }

  /** Backends an operator drained (ids); they stay drained across restarts until undrained. */
  loadDrained(): string[] {
    const rows = this.sql.exec<MetaRow>(`SELECT value FROM meta WHERE key = 'drained'`).toArray();
    return rows.length === 0 ? [] : (JSON.parse(rows[0]!.value) as string[]);
  }

  saveDrained(ids: readonly string[]): void {
    this.sql.exec(`INSERT OR REPLACE INTO meta (key, value) VALUES ('drained', ?)`, JSON.stringify(ids));
  }

  loadCounters(): SavedCounters | undefined {
    const rows = this.sql.exec<MetaRow>(`SELECT value FROM meta WHERE key = 'counters'`).toArray();
    return rows.length === 0 ? undefined : (JSON.parse(rows[0]!.value) as SavedCounters);
  }

  saveCounters(c: SavedCounters): void {
    this.sql.exec(`INSERT OR REPLACE INTO meta (key, value) VALUES ('counters', ?)`, JSON.stringify(c));
  }

  /** Health rows of the spec's backends at their current urls (rows of other addresses are stale). */
  loadHealth(spec: PoolSpec): HealthRow[] {
    const urls = new Map(spec.backends.map((b) => [b.id, b.url]));
    const out: HealthRow[] = [];
    for (const r of this.sql.exec<HealthSqlRow>(`SELECT id, url, row FROM backend_health`).toArray()) {
      if (urls.get(r.id) === r.url) out.push(JSON.parse(r.row) as HealthRow);
    }
    return out;
  }

  /** Replaces every stored health row with `rows` (a handful at most: only non-default ones). */
  saveHealth(spec: PoolSpec, rows: readonly HealthRow[]): void {
    const urls = new Map(spec.backends.map((b) => [b.id, b.url]));
    this.sql.exec(`DELETE FROM backend_health`);
    for (const r of rows) {
      const url = urls.get(r.id);
      if (url === undefined) continue;
      this.sql.exec(
        `INSERT INTO backend_health (id, url, row) VALUES (?, ?, ?)`,
        r.id,
        url,
        JSON.stringify(r),
      );
    }
  }
}
