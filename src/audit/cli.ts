import { ConfigError, loadConfig } from "../config.js";
import { dataFolderInUse } from "../files/data-folder.js";
import { PostgresConnection } from "../ledger/postgres-pool.js";
import { printable } from "../printable.js";
import type { AuditRecord } from "./audit-record.js";
import { openAuditTrail } from "./index.js";

export const AUDIT_USAGE =
  "Usage: crm-insights-mcp audit [--since ISO-8601] [--caller NAME] [--limit N] [--json]\n";

/**
 * `crm-insights-mcp audit`: the tool calls in the audit trail of this configuration (its
 * PostgreSQL database, else its data folder), oldest first; `--json` prints one JSON array.
 * Exit 0, 1 when the trail cannot be read, 2 on bad usage or configuration.
 */
export async function runAuditCommand(args: readonly string[]): Promise<number> {
  let since: number | undefined;
  let caller: string | undefined;
  let limit: number | undefined;
  let json = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const value = () => {
      const next = args[i + 1];
      i += 1;
      return next === undefined || next.startsWith("--") ? undefined : next;
    };
    if (arg === "--json") json = true;
    else if (arg === "--since") {
      const raw = value();
      since = raw === undefined ? Number.NaN : parseSince(raw);
      if (!Number.isFinite(since)) {
        return usage(
          `--since needs a date or time in ISO 8601, e.g. 2026-05-01 or 2026-05-01T09:00:00+09:00; got ${raw === undefined ? "nothing" : `"${raw}"`}.`,
        );
      }
    } else if (arg === "--caller") {
      caller = value();
      if (caller === undefined) {
        return usage(
          "--caller needs a caller's name: a static token's name, oauth:<claim value> for an OAuth caller, local:<login name>.",
        );
      }
    } else if (arg === "--limit") {
      const raw = value();
      limit = Number(raw);
      if (raw === undefined || !/^\d+$/.test(raw) || limit < 1) {
        return usage("--limit needs a whole number of calls, at least 1.");
      }
    } else if (arg === "-h" || arg === "--help") {
      process.stdout.write(AUDIT_USAGE);
      return 0;
    } else return usage(`Unknown argument "${arg}".`);
  }
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`crm-insights-mcp audit: ${error.message}\n`);
    return 2;
  }
  const database =
    config.databaseUrl === undefined ? undefined : new PostgresConnection(config.databaseUrl);
  const trail = openAuditTrail({ database, dataFolder: dataFolderInUse(config) });
  try {
    const records = await trail.list({ since, caller, limit });
    if (json) process.stdout.write(`${JSON.stringify(records)}\n`);
    else process.stdout.write(renderAudit(records, trail.location));
    return 0;
  } catch (error) {
    process.stderr.write(
      `crm-insights-mcp audit: cannot read the audit trail in ${trail.location}: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 1;
  } finally {
    await trail.close();
    await database?.close();
  }
}

/** A date alone is its start in UTC; a time must say its offset or Z. */
function parseSince(raw: string): number {
  if (/^\d{4}-\d{2}-\d{2}$/.test(raw)) return Date.parse(`${raw}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(raw)) {
    return Number.NaN;
  }
  return Date.parse(raw);
}

/**
 * One line per call: time, the caller's kind and name (with the OAuth identity behind the name),
 * tool, outcome, duration, arguments (shortened). Every line is made printable: what a record
 * holds came from callers, and must not act on the terminal that shows it.
 */
export function renderAudit(records: readonly AuditRecord[], location: string): string {
  if (records.length === 0) return `No tool calls in the audit trail (${location}).\n`;
  const lines = records.map((r) => {
    const outcome = r.error === undefined ? r.outcome : `${r.outcome} (${r.error})`;
    const args = JSON.stringify(r.arguments);
    const shown = args.length > 160 ? `${args.slice(0, 159)}…` : args;
    return printable(
      `${r.at}  ${r.caller_kind}  ${r.caller}${identity(r)}  ${r.tool}  ${outcome}  ${r.duration_ms} ms  ${shown}`,
    );
  });
  return `${lines.join("\n")}\n${records.length} call(s) from ${printable(location)}.\n`;
}

/** What an OAuth caller's name does not say: its subject (when the name is another claim) and client. */
function identity(record: AuditRecord): string {
  const parts: string[] = [];
  if (record.subject !== undefined && record.caller !== `oauth:${record.subject}`) {
    parts.push(`sub ${record.subject}`);
  }
  if (record.client_id !== undefined) parts.push(`client ${record.client_id}`);
  return parts.length === 0 ? "" : ` [${parts.join(", ")}]`;
}

function usage(problem: string): number {
  process.stderr.write(`crm-insights-mcp audit: ${problem}\n${AUDIT_USAGE}`);
  return 2;
}
