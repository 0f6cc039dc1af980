import type { Pool } from "pg";
import { log } from "../log.js";
import { withPoolClient } from "./postgres-client.js";

/**
 * The ledger's schema in PostgreSQL, as numbered migrations applied in order by the server
 * itself. Append new migrations; never edit one that has shipped: a database records the
 * versions it has applied (crm_schema_migrations) and only later ones run.
 */
export const MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  {
    version: 1,
    name: "export-job ledger, export budget, download leases",
    sql: `
      CREATE SEQUENCE crm_export_jobs_order;
      CREATE TABLE crm_export_jobs (
        scope text NOT NULL,
        job_id text NOT NULL,
        seq bigint NOT NULL DEFAULT nextval('crm_export_jobs_order'),
        request_key text NOT NULL,
        status text NOT NULL,
        created_by text,
        entry jsonb NOT NULL,
        PRIMARY KEY (scope, job_id)
      );
      CREATE INDEX crm_export_jobs_newest ON crm_export_jobs (scope, seq DESC);
      CREATE INDEX crm_export_jobs_by_request ON crm_export_jobs (scope, request_key, seq DESC);
      CREATE TABLE crm_export_budget (
        scope text PRIMARY KEY,
        rate_limited_until bigint
      );
      CREATE TABLE crm_export_create_calls (
        scope text NOT NULL,
        at bigint NOT NULL
      );
      CREATE INDEX crm_export_create_calls_window ON crm_export_create_calls (scope, at);
      CREATE TABLE crm_download_leases (
        scope text NOT NULL,
        job_id text NOT NULL,
        holder text NOT NULL,
        expires bigint NOT NULL,
        PRIMARY KEY (scope, job_id)
      );
    `,
  },
  {
    version: 2,
    name: "pending export creations",
    sql: `
      CREATE TABLE crm_export_create_claims (
        scope text NOT NULL,
        request_key text NOT NULL,
        owner jsonb NOT NULL,
        PRIMARY KEY (scope, request_key)
      );
    `,
  },
  {
    version: 3,
    name: "audit trail of tool calls",
    sql: `
      CREATE TABLE crm_audit_calls (
        id bigserial PRIMARY KEY,
        at timestamptz NOT NULL,
        caller text NOT NULL,
        tool text NOT NULL,
        arguments jsonb NOT NULL,
        outcome text NOT NULL,
        error_kind text,
        duration_ms integer NOT NULL
      );
      CREATE INDEX crm_audit_calls_by_time ON crm_audit_calls (at);
      CREATE INDEX crm_audit_calls_by_caller ON crm_audit_calls (caller, at);
    `,
  },
  {
    version: 4,
    name: "audit trail: the caller's kind and OAuth identity",
    sql: `
      ALTER TABLE crm_audit_calls
        ADD COLUMN caller_kind text,
        ADD COLUMN caller_issuer text,
        ADD COLUMN caller_subject text,
        ADD COLUMN caller_client_id text;
      `,
  },
  {
    version: 5,
    name: "history catalogue",
    sql: `
      CREATE TABLE crm_history_catalogue (
        scope text PRIMARY KEY,
        generation bigint NOT NULL
      );
      CREATE TABLE crm_history_exports (
        scope text NOT NULL,
        job_id text NOT NULL,
        kind text NOT NULL,
        subject_id text NOT NULL,
        job_created_at timestamptz NOT NULL,
        ingested_at timestamptz NOT NULL,
        rows bigint NOT NULL,
        entry jsonb NOT NULL,
        PRIMARY KEY (scope, job_id)
      );
      CREATE TABLE crm_history_partitions (
        scope text NOT NULL,
        dir text NOT NULL,
        dataset text NOT NULL,
        file text NOT NULL,
        rows bigint NOT NULL,
        entry jsonb NOT NULL,
        PRIMARY KEY (scope, dir)
      );
    `,
  },
];

export const SCHEMA_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

/** Serializes migrations of every process on the database (any constant key would do). */
const MIGRATION_LOCK_KEY = 7_300_113;

export class SchemaVersionError extends Error {
  override name = "SchemaVersionError";
}

const done = new WeakMap<Pool, Promise<void>>();

/**
 * Brings the database's schema to SCHEMA_VERSION, once per pool. Several processes starting at
 * once queue on a transaction-scoped advisory lock, so each migration runs exactly once. A
 * database migrated by a newer server is refused rather than written in a shape we do not know.
 */
export function migrate(pool: Pool): Promise<void> {
  let run = done.get(pool);
  if (run === undefined) {
    run = runMigrations(pool);
    done.set(pool, run);
    run.catch(() => done.delete(pool));
  }
  return run;
}

function runMigrations(pool: Pool): Promise<void> {
  return withPoolClient(pool, async (client) => {
    try {
      await client.query("BEGIN");
      await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]);
      await client.query(
        `CREATE TABLE IF NOT EXISTS crm_schema_migrations (
           version integer PRIMARY KEY,
           name text NOT NULL,
           applied_at timestamptz NOT NULL DEFAULT now()
         )`,
      );
      const applied = await client.query<{ version: number }>(
        "SELECT version FROM crm_schema_migrations",
      );
      const have = new Set(applied.rows.map((r) => r.version));
      const newest = Math.max(0, ...have);
      if (newest > SCHEMA_VERSION) {
        throw new SchemaVersionError(
          `The ledger database has schema version ${newest}, newer than this server's ${SCHEMA_VERSION}: it was migrated by a newer crm-insights-mcp. Upgrade this server (every server sharing CRM_DATABASE_URL must run the same or a newer version).`,
        );
      }
      for (const migration of MIGRATIONS) {
        if (have.has(migration.version)) continue;
        await client.query(migration.sql);
        await client.query("INSERT INTO crm_schema_migrations (version, name) VALUES ($1, $2)", [
          migration.version,
          migration.name,
        ]);
        log.info("ledger database migrated", { version: migration.version, name: migration.name });
      }
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    }
  });
}
