import type { Pool, PoolClient } from "pg";
import { log } from "../log.js";
import { migrate } from "./postgres-schema.js";

/** Connections each server process keeps at most; PostgreSQL allows 100 by default. */
const POOL_SIZE = 10;

/**
 * The PostgreSQL ledger's connection: a pool made on first use (pg is loaded only then), the
 * schema migrated before any statement, queries and transactions. A database that was down is
 * tried again on the next call rather than failing forever.
 */
export class PostgresConnection {
  private poolPromise: Promise<Pool> | undefined;
  private ready: Promise<Pool> | undefined;
  private closed = false;

  constructor(
    private readonly url: string,
    /** The database as named in messages (no credentials). */
    private readonly location: string,
  ) {}

  async query<R extends object>(text: string, values: unknown[]): Promise<R[]> {
    const pool = await this.migrated();
    return (await pool.query<R>(text, values)).rows;
  }

  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  async transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const pool = await this.migrated();
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      const result = await work(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const pool = this.poolPromise;
    this.poolPromise = undefined;
    this.ready = undefined;
    if (pool !== undefined) await (await pool).end();
  }

  /** The pool, once the schema is created or migrated (once per process, before any statement). */
  private migrated(): Promise<Pool> {
    if (this.closed) return Promise.reject(new Error("The ledger database connection is closed."));
    this.poolPromise ??= createPool(this.url);
    this.ready ??= this.poolPromise.then(async (pool) => {
      await migrate(pool);
      return pool;
    });
    const ready = this.ready;
    ready.catch((error: unknown) => {
      if (this.ready === ready) this.ready = undefined;
      log.warn("ledger database not ready", {
        database: this.location,
        error: error instanceof Error ? error.message : String(error),
      });
    });
    return ready;
  }
}

async function createPool(url: string): Promise<Pool> {
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({
    connectionString: url,
    max: POOL_SIZE,
    application_name: "crm-insights-mcp",
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    // A statement stuck behind a lock fails the call instead of hanging it.
    statement_timeout: 15_000,
  });
  // An idle connection dropped by the server must not end the process (pg emits it on the pool).
  pool.on("error", (error) => {
    log.warn("ledger database connection lost", { error: error.message });
  });
  return pool;
}

/** A bigint column as read by pg (a string), as a number; `undefined` for NULL or garbage. */
export function numberOrUndefined(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}
