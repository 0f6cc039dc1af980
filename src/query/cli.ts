import { writeFile } from "node:fs/promises";
import { extname } from "node:path";
import { type Config, ConfigError, loadConfig, loadQuerySettings } from "../config.js";
import { formatBytes } from "../format.js";
import { chartField, chartLine } from "../report/answer-report.js";
import { chooseChart } from "../report/chart-choice.js";
import { reportHtmlWithData } from "../report/html.js";
import { defaultLang, isLang, type Lang } from "../report/i18n/lang.js";
import { QueryError } from "./errors.js";
import { type QueryFilesOptions, type QueryResult, queryFiles } from "./index.js";
import { renderQueryTable } from "./render.js";
import type { ExtraTables } from "./session.js";

const USAGE = `Usage: crm-insights-mcp query --sql SQL [--json] [--max-rows N] [--conversion-event-type TYPE] [--report PATH.html [--lang ko|en]] FILE...
       crm-insights-mcp query --history --sql SQL [...] [FILE...]
  --history also the tables history and history_campaigns: every export the server (or sync)
            added to the configured data folder's history, each send round once
  --report  also write the answer as a page with its chart and table (self-contained HTML)
  --lang    the page's language; by default Korean when CRM_TIME_ZONE is Asia/Seoul, else English
`;
const DEFAULT_MAX_ROWS = 1000;

interface QueryCommand {
  sql?: string;
  json: boolean;
  history: boolean;
  maxRows: number;
  conversionEventType?: string;
  report?: string;
  lang?: Lang;
  files: string[];
}

/** Options without a value. */
const FLAGS: Record<string, (command: QueryCommand) => void> = {
  "--json": (c) => {
    c.json = true;
  },
  "--history": (c) => {
    c.history = true;
  },
};

/** Options with a value: each stores it, or says what is wrong with it. */
const VALUE_OPTIONS: Record<string, (value: string, command: QueryCommand) => string | undefined> =
  {
    "--sql": (v, c) => {
      c.sql = v;
      return undefined;
    },
    "--max-rows": (v, c) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0) return "--max-rows needs a whole number.";
      c.maxRows = n;
      return undefined;
    },
    "--conversion-event-type": (v, c) => {
      c.conversionEventType = v;
      return undefined;
    },
    "--report": (v, c) => {
      if (extname(v).toLowerCase() !== ".html") {
        return `--report takes a path ending in .html (got ${JSON.stringify(v)}).`;
      }
      c.report = v;
      return undefined;
    },
    "--lang": (v, c) => {
      if (!isLang(v)) return `--lang takes ko or en (got ${JSON.stringify(v)}).`;
      c.lang = v;
      return undefined;
    },
  };

/** The command's options, or the problem with them. */
function parseArgs(args: string[]): QueryCommand | { problem: string } | "help" {
  const command: QueryCommand = {
    json: false,
    history: false,
    maxRows: DEFAULT_MAX_ROWS,
    files: [],
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const flag = FLAGS[arg];
    const option = VALUE_OPTIONS[arg];
    if (arg === "-h" || arg === "--help") return "help";
    if (flag !== undefined) flag(command);
    else if (option !== undefined) {
      const value = args[++i];
      if (value === undefined) return { problem: `${arg} needs a value.` };
      const problem = option(value, command);
      if (problem !== undefined) return { problem };
    } else if (arg.startsWith("--")) return { problem: `Unknown option ${arg}.` };
    else command.files.push(arg);
  }
  if (command.sql === undefined) return { problem: "Give the query with --sql." };
  if (command.files.length === 0 && !command.history) {
    return { problem: "Give at least one export file, or --history." };
  }
  if (command.lang !== undefined && command.report === undefined) {
    return { problem: "--lang is the language of the --report page; give --report PATH.html." };
  }
  return command;
}

/**
 * The history as `query --history` reads it, given by the bin (src/cli.ts): the query module may
 * not import the history module, which builds on it.
 */
export interface HistoryReader {
  /** Where the history lives, for messages. */
  readonly folder: string;
  /** Runs `work` over the history's tables; `exports` is how many exports the history holds. */
  read<T>(
    conversionEventType: string | undefined,
    work: (extra: ExtraTables, exports: number) => Promise<T>,
  ): Promise<T>;
  close(): Promise<void>;
}

export interface QueryCommandDeps {
  /** The configuration's history, or undefined with CRM_HISTORY=off. */
  openHistory(config: Config): Promise<HistoryReader | undefined>;
}

/**
 * `crm-insights-mcp query --sql SQL FILE...`: the query_export tool's SQL over local export files,
 * for scripts. `--json` prints {columns, rows, row_count, truncated}; errors go to stderr.
 * `--conversion-event-type` chooses event_role's conversions, as `summarize` does. `--report`
 * also writes the answer as the report page, drawn as the tool's view draws it. `--history`
 * adds the history's tables, read from the data folder and scope the server uses.
 */
export async function runQueryCommand(args: string[], deps: QueryCommandDeps): Promise<number> {
  const command = parseArgs(args);
  if (command === "help") {
    process.stdout.write(USAGE);
    return 0;
  }
  if ("problem" in command) return usage(command.problem);
  const sql = command.sql as string;
  let settings: ReturnType<typeof loadQuerySettings>;
  let history: HistoryReader | undefined;
  try {
    settings = loadQuerySettings(process.env);
    if (command.history) {
      history = await deps.openHistory(loadConfig(process.env));
      if (history === undefined) {
        process.stderr.write(
          "crm-insights-mcp query: the history of exports is off (CRM_HISTORY=off), so there is no history to read. Unset CRM_HISTORY (the server then adds the exports it downloads), or query export files without --history.\n",
        );
        return 1;
      }
    }
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`crm-insights-mcp query: ${error.message}\n`);
    return 2;
  }
  try {
    const options: QueryFilesOptions = {
      sql,
      files: command.files.map((path) => ({ path, jobId: null })),
      limits: settings.query,
      maxRows: command.maxRows,
      ...(command.conversionEventType !== undefined
        ? { conversionEventType: command.conversionEventType }
        : {}),
    };
    const held = history;
    const result =
      held === undefined
        ? await queryFiles(options)
        : await held.read(command.conversionEventType, (extra, exports) => {
            if (exports === 0) process.stderr.write(`${emptyHistoryNote(held.folder)}\n`);
            return queryFiles({ ...options, extra });
          });
    if (command.json) {
      const { columns, rows, row_count, truncated } = result;
      process.stdout.write(`${JSON.stringify({ columns, rows, row_count, truncated })}\n`);
    } else {
      const fullRows = "the --json output";
      process.stdout.write(`${renderQueryTable(result, { maxRows: command.maxRows, fullRows })}\n`);
    }
    if (command.report !== undefined) {
      const lang = command.lang ?? defaultLang(settings.timeZone);
      const wrote = await writeAnswerPage(command.report, result, sql, lang);
      // stdout stays the answer alone when it is JSON.
      (command.json ? process.stderr : process.stdout).write(`${wrote}\n`);
    }
    return 0;
  } catch (error) {
    if (!(error instanceof QueryError)) throw error;
    process.stderr.write(`crm-insights-mcp query: ${error.message}\n`);
    return 1;
  } finally {
    await history?.close();
  }
}

function emptyHistoryNote(folder: string): string {
  return `crm-insights-mcp query: the history of exports (${folder}) holds no export yet. The server adds every campaign export it downloads; \`crm-insights-mcp sync\` adds the campaigns of the last 30 days. Check that CRM_DATA_DIR (and CRM_BASE_URL, CRM_APPLICATION_ID) are the server's.`;
}

/** The report page with the answer written in; returns the line that says so. */
async function writeAnswerPage(
  path: string,
  result: QueryResult,
  sql: string,
  lang: Lang,
): Promise<string> {
  const chart = chooseChart(result.columns, result.rows);
  const { columns, rows, row_count, truncated, truncated_by } = result;
  const data = {
    columns,
    rows,
    row_count,
    truncated,
    ...(truncated_by === undefined ? {} : { truncated_by }),
    chart: chartField(chart),
    sql,
  };
  const html = await reportHtmlWithData(data, lang);
  try {
    await writeFile(path, html);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new QueryError(
      `cannot write the page ${path} (${code}); give --report a path in a folder that exists and that you may write.`,
      "bad_input",
    );
  }
  return `Wrote ${path} (${formatBytes(Buffer.byteLength(html))}). ${chartLine(chart)}`;
}

function usage(problem: string): number {
  process.stderr.write(`${problem}\n${USAGE}`);
  return 2;
}
