import type { PostgresConnection } from "../ledger/postgres-pool.js";
import type { AuditTrail } from "./audit-record.js";
import { DenialLimitedTrail } from "./denial-limit.js";
import { FileAuditTrail } from "./file-trail.js";
import { PostgresAuditTrail } from "./postgres-trail.js";

export type {
  AuditCall,
  AuditCaller,
  AuditOutcome,
  AuditQuery,
  AuditRecord,
  AuditTrail,
  CallerKind,
} from "./audit-record.js";

/**
 * The trail beside the ledger: in its PostgreSQL database (on the process's connection to it,
 * which the trail's close leaves open), else in the data folder; denials rate-limited per caller
 * (denial-limit.ts).
 */
export function openAuditTrail(where: {
  database: PostgresConnection | undefined;
  dataFolder: string;
}): AuditTrail {
  return new DenialLimitedTrail(
    where.database === undefined
      ? new FileAuditTrail(where.dataFolder)
      : new PostgresAuditTrail(where.database),
  );
}
