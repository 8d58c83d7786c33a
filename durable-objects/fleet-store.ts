/**
 * What a RouterDO keeps durably, in its SQLite storage: the pool spec it
 * routes over (backends with urls, never apiKeys) and each backend's
 * health. The affinity index is deliberately NOT stored: it is a belief
 * rebuilt from traffic within seconds, and persisting it per request would
 * cost a write on the hot path.
 */
import type { PoolSpec } from "./rpc";

export interface HealthRow {
  readonly id: string;
  readonly healthy: boolean;
  readonly consecutiveFailures: number;
  /** Epoch ms of the next /health probe (unhealthy backends only). */
  readonly nextProbeAt: number | null;
}

type MetaRow = { value: string } & Record<string, SqlStorageValue>;
type HealthSqlRow = {
  id: string;
  healthy: number;
  failures: number;
  next_probe_at: number | null;
} & Record<string, SqlStorageValue>;

export class FleetStore {
  constructor(private readonly sql: SqlStorage) {}

  /** Creates the schema; idempotent, run once per instance inside blockConcurrencyWhile. */
  migrate(): void {
    this.sql.exec(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    this.sql.exec(
      `CREATE TABLE IF NOT EXISTS health (
         id TEXT PRIMARY KEY,
         healthy INTEGER NOT NULL,
         failures INTEGER NOT NULL,
         next_probe_at INTEGER
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
    // Health of backends that left the pool is meaningless; forget it.
    const ids = spec.backends.map((b) => b.id);
    const rows = this.sql.exec<{ id: string }>(`SELECT id FROM health`).toArray();
    for (const r of rows) if (!ids.includes(r.id)) this.sql.exec(`DELETE FROM health WHERE id = ?`, r.id);
  }

  loadHealth(): HealthRow[] {
    return this.sql
      .exec<HealthSqlRow>(`SELECT id, healthy, failures, next_probe_at FROM health`)
      .toArray()
      .map((r) => ({
        id: r.id,
        healthy: r.healthy === 1,
        consecutiveFailures: r.failures,
        nextProbeAt: r.next_probe_at,
      }));
  }

  saveHealth(row: HealthRow): void {
    if (row.healthy && row.consecutiveFailures === 0) {
      this.sql.exec(`DELETE FROM health WHERE id = ?`, row.id);
      return;
    }
    this.sql.exec(
      `INSERT OR REPLACE INTO health (id, healthy, failures, next_probe_at) VALUES (?, ?, ?, ?)`,
      row.id,
      row.healthy ? 1 : 0,
      row.consecutiveFailures,
      row.nextProbeAt,
    );
  }
}
