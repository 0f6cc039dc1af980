import { ConfigError, loadQuerySettings } from "../config.js";
import { QueryError } from "./errors.js";
import { queryFiles } from "./index.js";
import { renderQueryTable } from "./render.js";

const USAGE =
  "Usage: crm-insights-mcp query --sql SQL [--json] [--max-rows N] [--conversion-event-type TYPE] FILE...\n";
const DEFAULT_MAX_ROWS = 1000;

/**
 * `crm-insights-mcp query --sql SQL FILE...`: the query_export tool's SQL over local export files,
 * for scripts. `--json` prints {columns, rows, row_count, truncated}; errors go to stderr.
 * `--conversion-event-type` chooses event_role's conversions, as `summarize` does.
 */
export async function runQueryCommand(args: string[]): Promise<number> {
  let sql: string | undefined;
  let json = false;
  let maxRows = DEFAULT_MAX_ROWS;
  let conversionEventType: string | undefined;
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--json") json = true;
    else if (arg === "--sql") {
      sql = args[++i];
      if (sql === undefined) return usage("--sql needs a value.");
    } else if (arg === "--max-rows") {
      const value = Number(args[++i]);
      if (!Number.isInteger(value) || value < 0) return usage("--max-rows needs a whole number.");
      maxRows = value;
    } else if (arg === "--conversion-event-type") {
      conversionEventType = args[++i];
      if (conversionEventType === undefined) return usage("--conversion-event-type needs a value.");
    } else if (arg === "-h" || arg === "--help") {
      process.stdout.write(USAGE);
      return 0;
    } else if (arg.startsWith("--")) return usage(`Unknown option ${arg}.`);
    else files.push(arg);
  }
  if (sql === undefined) return usage("Give the query with --sql.");
  if (files.length === 0) return usage("Give at least one export file.");
  let settings: ReturnType<typeof loadQuerySettings>;
  try {
    settings = loadQuerySettings(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`crm-insights-mcp query: ${error.message}\n`);
    return 2;
  }
  try {
    const result = await queryFiles({
      sql,
      files: files.map((path) => ({ path, jobId: null })),
      limits: settings.query,
      maxRows,
      ...(conversionEventType !== undefined ? { conversionEventType } : {}),
    });
    if (json) {
      const { columns, rows, row_count, truncated } = result;
      process.stdout.write(`${JSON.stringify({ columns, rows, row_count, truncated })}\n`);
    } else
      process.stdout.write(
        `${renderQueryTable(result, { maxRows, fullRows: "the --json output" })}\n`,
      );
    return 0;
  } catch (error) {
    if (!(error instanceof QueryError)) throw error;
    process.stderr.write(`crm-insights-mcp query: ${error.message}\n`);
    return 1;
  }
}

function usage(problem: string): number {
  process.stderr.write(`${problem}\n${USAGE}`);
  return 2;
}
