import type { Pool, PoolClient } from "pg";
import { log } from "../log.js";
import { WriteBacklog } from "./postgres-backlog.js";
import { withPoolClient } from "./postgres-client.js";
import { migrate } from "./postgres-schema.js";
import { DatabaseUnavailableError, isConnectionFailure } from "./postgres-unavailable.js";
import { describeDatabase } from "./postgres-url.js";

/**
 * Connections a process keeps at most to its database, for the ledger, the history's catalogue
 * and the audit trail together (docs/team-mode.md budgets them): PostgreSQL allows 100 by
 * default. Their statements are short (a row lock, a few rows), so more calls than this at once
 * queue for a connection rather than open more.
 */
export const POOL_SIZE = 10;
/** How long close() keeps trying to write what an outage held back. */
const CLOSE_SETTLE_MS = 5_000;
/** How long statements must fail before the outage is logged as one. */
const OUTAGE_LOG_AFTER_MS = 1_000;

/** Queries and transactions, as the statements of a held write run them. */
export interface PostgresStatements {
  query<R extends object>(text: string, values: unknown[]): Promise<R[]>;
  transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T>;
}

/** A write to do once the database answers, if it cannot be done now. */
export interface LaterWrite {
  /** What it is, for the log (no secrets: job IDs, not arguments). */
  what: string;
  write(db: PostgresStatements): Promise<unknown>;
}

/**
 * A process's one connection to CRM_DATABASE_URL, which the ledger, the history's catalogue and
 * the audit trail share (runtime.ts opens it and closes it after them; a command that needs one
 * of them alone opens its own): a pool made on first use (pg is loaded only then), the schema
 * migrated before any statement, queries and transactions. The database going away (a restart,
 * a failover) fails statements with DatabaseUnavailableError, never ends the process, and is
 * tried again on the next statement; writes that must not be lost meanwhile are held
 * (writeBehind) and written, before anything else, once it answers again.
 */
export class PostgresConnection implements PostgresStatements {
  /** The database as named in messages (no credentials). */
  readonly location: string;
  private poolPromise: Promise<Pool> | undefined;
  private ready: Promise<Pool> | undefined;
  private closing: Promise<void> | undefined;
  private closed = false;
  private readonly backlog = new WriteBacklog();
  /** Since when statements fail for want of the database, how many did, and why the first. */
  private outage: { since: number; failed: number; logged: boolean; first: string } | undefined;
  /** The statements as held writes run them: without waiting for the backlog they are in. */
  private readonly direct: PostgresStatements = {
    query: (text, values) => this.run(text, values),
    transaction: (work) => this.runTransaction(work),
  };

  constructor(private readonly url: string) {
    this.location = describeDatabase(url);
  }

  async query<R extends object>(text: string, values: unknown[]): Promise<R[]> {
    await this.backlog.flush();
    return this.run<R>(text, values);
  }

  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back when it throws.
   * When the connection is lost while COMMIT is out, nobody can tell whether it committed:
   * `ifCommitLost` may name the write that undoes it, held until the database answers.
   */
  async transaction<T>(
    work: (client: PoolClient) => Promise<T>,
    ifCommitLost?: (result: T) => LaterWrite | undefined,
  ): Promise<T> {
    await this.backlog.flush();
    return this.runTransaction(work, ifCommitLost);
  }

  /**
   * A write that must land even if the database is away right now (a job the service created,
   * an audit record): done at once, or held and done as soon as the database answers again.
   * Resolves true when written, false when held; rejects only when the database refused it.
   */
  async writeBehind(later: LaterWrite): Promise<boolean> {
    const held = { what: later.what, write: () => later.write(this.direct) };
    if (this.backlog.size > 0) {
      // Behind what is already held, so writes land in the order they were made.
      this.backlog.hold(held);
      return this.backlog.flush().then(
        () => true,
        () => false,
      );
    }
    try {
      await held.write();
      return true;
    } catch (error) {
      if (!(error instanceof DatabaseUnavailableError)) throw error;
      this.backlog.hold(held);
      return false;
    }
  }

  /** writeBehind of one statement, named in the log by its first words ("INSERT INTO t"). */
  queryOrHold(text: string, values: unknown[]): Promise<boolean> {
    const what = text.trim().split(/\s+/).slice(0, 3).join(" ");
    return this.writeBehind({ what, write: (db) => db.query(text, values) });
  }

  /**
   * Writes what is held (trying for a few seconds), then ends the pool: call it once the stores
   * that share this connection are done with it.
   */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    const lost = await this.backlog.settle(CLOSE_SETTLE_MS);
    if (lost.length > 0) {
      log.error("database writes lost: the database did not answer before the process ended", {
        database: this.location,
        lost: lost.length,
        first: lost.slice(0, 5).map((w) => w.what),
      });
    }
    this.closed = true;
    const pool = this.poolPromise;
    this.poolPromise = undefined;
    this.ready = undefined;
    if (pool !== undefined) await (await pool).end();
  }

  private async run<R extends object>(text: string, values: unknown[]): Promise<R[]> {
    try {
      const pool = await this.migrated();
      const rows = (await pool.query<R>(text, values)).rows;
      this.answered();
      return rows;
    } catch (error) {
      throw this.failure(error);
    }
  }

  private async runTransaction<T>(
    work: (client: PoolClient) => Promise<T>,
    ifCommitLost?: (result: T) => LaterWrite | undefined,
  ): Promise<T> {
    try {
      const pool = await this.migrated();
      const result = await withPoolClient(pool, async (client) => {
        let done: T;
        try {
          await client.query("BEGIN");
          done = await work(client);
        } catch (error) {
          await client.query("ROLLBACK").catch(() => undefined);
          throw error;
        }
        try {
          await client.query("COMMIT");
        } catch (error) {
          const undo = isConnectionFailure(error) ? ifCommitLost?.(done) : undefined;
          if (undo !== undefined) {
            this.backlog.hold({ what: undo.what, write: () => undo.write(this.direct) });
          }
          throw error;
        }
        return done;
      });
      this.answered();
      return result;
    } catch (error) {
      throw this.failure(error);
    }
  }

  /**
   * A lost or refused connection as DatabaseUnavailableError (anything else as it is). An
   * outage is logged once it has lasted a second, with the driver's first words: a restart
   * first ends the open connections one by one while others still answer, and those blips are
   * not worth a warning each.
   */
  private failure(error: unknown): unknown {
    if (!isConnectionFailure(error)) return error;
    const now = performance.now();
    this.outage ??= { since: now, failed: 0, logged: false, first: driverWords(error) };
    this.outage.failed += 1;
    if (!this.outage.logged && now - this.outage.since >= OUTAGE_LOG_AFTER_MS) {
      this.outage.logged = true;
      log.warn("database unavailable: calls that need it fail until it answers again", {
        database: this.location,
        error: this.outage.first,
      });
    }
    return error instanceof DatabaseUnavailableError ? error : new DatabaseUnavailableError(error);
  }

  private answered(): void {
    const outage = this.outage;
    if (outage === undefined) return;
    this.outage = undefined;
    const seconds = (performance.now() - outage.since) / 1000;
    const fields = {
      database: this.location,
      after_seconds: Math.round(seconds * 10) / 10,
      failed_statements: outage.failed,
      held_writes: this.backlog.size,
    };
    if (outage.logged || seconds * 1000 >= OUTAGE_LOG_AFTER_MS) {
      log.warn("database answers again", { ...fields, error: outage.first });
    } else {
      log.info("database connection lost, made again", { ...fields, error: outage.first });
    }
  }

  /** The pool, once the schema is created or migrated (once per process, before any statement). */
  private migrated(): Promise<Pool> {
    if (this.closed) return Promise.reject(new Error("The database connection is closed."));
    this.poolPromise ??= createPool(this.url);
    this.ready ??= this.poolPromise.then(async (pool) => {
      await migrate(pool);
      return pool;
    });
    const ready = this.ready;
    ready.catch((error: unknown) => {
      if (this.ready === ready) this.ready = undefined;
      // An unreachable database is logged once per outage by failure().
      if (isConnectionFailure(error)) return;
      log.warn("database not ready", {
        database: this.location,
        error: error instanceof Error ? error.message : String(error),
      });
    });
    return ready;
  }
}

/** The driver's own description of a connection failure, for the log. */
function driverWords(error: unknown): string {
  const cause = error instanceof DatabaseUnavailableError ? error.cause : error;
  if (cause instanceof AggregateError && cause.errors[0] instanceof Error) {
    return cause.errors[0].message;
  }
  return cause instanceof Error ? cause.message : String(cause);
}

/** The pool's settings, all of them: the one place a process's database connections are made. */
async function createPool(url: string): Promise<Pool> {
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({
    connectionString: url,
    max: POOL_SIZE,
    // What pg_stat_activity shows; the URL's own ?application_name= (one per process) wins.
    application_name: "crm-insights-mcp",
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    // A statement stuck behind a lock fails the call instead of hanging it.
    statement_timeout: 15_000,
  });
  // An idle connection dropped by the server must not end the process (pg emits it on the pool);
  // the next statement finds out whether the database itself is gone, and logs that once.
  pool.on("error", (error) => {
    log.debug("idle database connection lost", { error: error.message });
  });
  return pool;
}

/** A bigint column as read by pg (a string), as a number; `undefined` for NULL or garbage. */
export function numberOrUndefined(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}
