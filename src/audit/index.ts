import type { AuditTrail } from "./audit-record.js";
import { FileAuditTrail } from "./file-trail.js";
import { PostgresAuditTrail } from "./postgres-trail.js";

export type {
  AuditCall,
  AuditOutcome,
  AuditQuery,
  AuditRecord,
  AuditTrail,
} from "./audit-record.js";

/** The trail beside the ledger: in its PostgreSQL database, else in the data folder. */
export function openAuditTrail(where: {
  databaseUrl: string | undefined;
  dataFolder: string;
}): AuditTrail {
  return where.databaseUrl === undefined
    ? new FileAuditTrail(where.dataFolder)
    : new PostgresAuditTrail(where.databaseUrl);
}
