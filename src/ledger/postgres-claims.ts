import {
  type ClaimJudge,
  type ClaimOwner,
  type ClaimResult,
  parseClaimOwner,
} from "./pending-creation.js";
import type { PostgresConnection } from "./postgres-pool.js";

/**
 * Pending creations (pending-creation.ts) in PostgreSQL: one row per scope and request key in
 * crm_export_create_claims, read and replaced under its row lock, so processes on any host
 * agree on one holder. The observer's judge decides on abandonment, as for the file ledger.
 */
export class PostgresClaims {
  constructor(
    private readonly db: PostgresConnection,
    private readonly scope: string,
    private readonly judge: ClaimJudge,
  ) {}

  claim(requestKey: string, owner: ClaimOwner): Promise<ClaimResult> {
    return this.db.transaction(async (client) => {
      const inserted = await client.query(
        `INSERT INTO crm_export_create_claims (scope, request_key, owner) VALUES ($1, $2, $3)
         ON CONFLICT (scope, request_key) DO NOTHING RETURNING request_key`,
        [this.scope, requestKey, owner],
      );
      if (inserted.rows.length === 1) {
        this.judge.forget(requestKey);
        return { claimed: true };
      }
      const rows = await client.query<{ owner: unknown }>(
        "SELECT owner FROM crm_export_create_claims WHERE scope = $1 AND request_key = $2 FOR UPDATE",
        [this.scope, requestKey],
      );
      const holder = parseClaimOwner(rows.rows[0]?.owner);
      // Released between the insert and the lock: the next try takes it.
      if (rows.rows.length === 0) return { claimed: false, holder: holder ?? owner };
      if (
        holder !== undefined &&
        holder.token !== owner.token &&
        !this.judge.abandoned(requestKey, holder)
      ) {
        return { claimed: false, holder };
      }
      await client.query(
        "UPDATE crm_export_create_claims SET owner = $3 WHERE scope = $1 AND request_key = $2",
        [this.scope, requestKey, owner],
      );
      this.judge.forget(requestKey);
      return { claimed: true };
    });
  }

  async renew(requestKey: string, owner: ClaimOwner): Promise<void> {
    await this.db.query(
      `UPDATE crm_export_create_claims SET owner = $3
       WHERE scope = $1 AND request_key = $2 AND owner->>'token' = $4`,
      [this.scope, requestKey, owner, owner.token],
    );
  }

  async release(requestKey: string, owner: ClaimOwner): Promise<void> {
    // Released even across an outage, so other processes need not wait for the claim to lapse.
    await this.db.writeBehind({
      what: "export creation claim released",
      write: (db) =>
        db.query(
          `DELETE FROM crm_export_create_claims
           WHERE scope = $1 AND request_key = $2 AND owner->>'token' = $3`,
          [this.scope, requestKey, owner.token],
        ),
    });
  }
}
