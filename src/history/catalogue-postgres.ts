import type { PoolClient } from "pg";
import type { PostgresConnection } from "../ledger/postgres-pool.js";
import {
  type CatalogueChange,
  type ExportRecord,
  exportRecordSchema,
  type HistoryCatalogue,
  type Partition,
  partitionSchema,
} from "./catalogue.js";
import { CatalogueConflictError, HistoryError } from "./errors.js";
import type { CatalogueStore } from "./store.js";

/**
 * The catalogue in the ledger's PostgreSQL database (tables crm_history_*, made by the ledger's
 * migrations), one per ledger scope: every server process of a team and `sync` share it. Each
 * export and partition is a row (its record as jsonb, the columns a person would query beside
 * it); a commit is one transaction that first locks the scope's generation row.
 */
export class PostgresCatalogueStore implements CatalogueStore {
  readonly location: string;

  /** On the process's connection to the database, which the ledger shares. */
  constructor(
    private readonly db: PostgresConnection,
    private readonly scope: string,
  ) {
    this.location = db.location;
  }

  async read(): Promise<HistoryCatalogue> {
    return this.db.transaction(async (client) => {
      // One snapshot for the three reads: a commit between them would mix generations.
      await client.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
      return this.readWith(client);
    });
  }

  async commit(generation: number, change: CatalogueChange): Promise<HistoryCatalogue> {
    return this.db.transaction(async (client) => {
      await client.query(
        "INSERT INTO crm_history_catalogue (scope, generation) VALUES ($1, 0) ON CONFLICT (scope) DO NOTHING",
        [this.scope],
      );
      const locked = await client.query<{ generation: string }>(
        "SELECT generation FROM crm_history_catalogue WHERE scope = $1 FOR UPDATE",
        [this.scope],
      );
      const current = Number(locked.rows[0]?.generation ?? 0);
      if (current !== generation) {
        throw new CatalogueConflictError(
          `the history catalogue moved from generation ${generation} to ${current}`,
        );
      }
      for (const record of change.putExports ?? []) await this.putExport(client, record);
      for (const dir of change.dropPartitions ?? []) {
        await client.query("DELETE FROM crm_history_partitions WHERE scope = $1 AND dir = $2", [
          this.scope,
          dir,
        ]);
      }
      for (const partition of change.putPartitions ?? []) {
        await this.putPartition(client, partition);
      }
      await client.query("UPDATE crm_history_catalogue SET generation = $2 WHERE scope = $1", [
        this.scope,
        current + 1,
      ]);
      return this.readWith(client);
    });
  }

  /** Nothing of its own to close: the connection is its opener's to close. */
  async close(): Promise<void> {}

  private async readWith(client: PoolClient): Promise<HistoryCatalogue> {
    const state = await client.query<{ generation: string }>(
      "SELECT generation FROM crm_history_catalogue WHERE scope = $1",
      [this.scope],
    );
    const exports = await client.query<{ entry: unknown }>(
      "SELECT entry FROM crm_history_exports WHERE scope = $1 ORDER BY job_created_at, job_id",
      [this.scope],
    );
    const partitions = await client.query<{ entry: unknown }>(
      "SELECT entry FROM crm_history_partitions WHERE scope = $1 ORDER BY dir",
      [this.scope],
    );
    return {
      generation: Number(state.rows[0]?.generation ?? 0),
      exports: exports.rows.map((r) => this.parse(exportRecordSchema, r.entry, "export")),
      partitions: partitions.rows.map((r) => this.parse(partitionSchema, r.entry, "partition")),
    };
  }

  private parse<T>(
    schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } },
    value: unknown,
    what: string,
  ): T {
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    throw new HistoryError(
      `the history catalogue in ${this.location} holds a ${what} record this server cannot read (written by a newer crm-insights-mcp, or edited by hand). Nothing was changed; upgrade this server, or remove the record.`,
      "corrupt_catalogue",
    );
  }

  private async putExport(client: PoolClient, record: ExportRecord): Promise<void> {
    const subject = record.kind === "campaign_event_data" ? record.campaign_id : record.scenario_id;
    await client.query(
      `INSERT INTO crm_history_exports
         (scope, job_id, kind, subject_id, job_created_at, ingested_at, rows, entry)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)
       ON CONFLICT (scope, job_id) DO UPDATE SET kind = $3, subject_id = $4,
         job_created_at = $5, ingested_at = $6, rows = $7, entry = $8::jsonb`,
      [
        this.scope,
        record.job_id,
        record.kind,
        subject,
        new Date(record.job_created_at),
        new Date(record.ingested_at),
        record.rows,
        JSON.stringify(record),
      ],
    );
  }

  private async putPartition(client: PoolClient, partition: Partition): Promise<void> {
    await client.query(
      `INSERT INTO crm_history_partitions (scope, dir, dataset, file, rows, entry)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb)
       ON CONFLICT (scope, dir) DO UPDATE SET dataset = $3, file = $4, rows = $5, entry = $6::jsonb`,
      [
        this.scope,
        partition.dir,
        partition.dataset,
        partition.file,
        partition.rows,
        JSON.stringify(partition),
      ],
    );
  }
}
