import { QueryError } from "./errors.js";
import { EVENTS_COLUMNS } from "./events-view.js";

/** A table of the session and its columns, in order. */
export interface TableColumns {
  name: string;
  columns: readonly string[];
}

/** What the hint may look at besides DuckDB's message: the statement and the session's tables. */
export interface HintContext {
  sql: string;
  tables: readonly TableColumns[];
}

/**
 * A DuckDB error as a QueryError: a read the session's settings blocked is a refusal, the rest
 * are SQL errors.
 */
export function sqlError(error: unknown, context?: HintContext): QueryError {
  const message = error instanceof Error ? error.message : String(error);
  const blocked = errorKind(message) === "Permission" || /disabled by configuration/.test(message);
  return new QueryError(sqlErrorText(error, context), blocked ? "refused_statement" : "sql_error");
}

/**
 * DuckDB's error message with a hint for the model: DuckDB names the column, the function or
 * the position, and we add what is true of these tables.
 */
export function sqlErrorText(error: unknown, context?: HintContext): string {
  const message = (error instanceof Error ? error.message : String(error)).trim();
  return `DuckDB could not run the query: ${message}\nHint: ${hintFor(message, context)}`;
}

/**
 * The kind DuckDB gives on the message's first line ("Binder", "Parser", ...): a message may
 * start with what failed ("Failed to extract statements: Parser Error: ..."), and the lines
 * after the first quote the statement, which may hold any words.
 */
function errorKind(message: string): string | undefined {
  const first = message.split("\n", 1)[0] ?? "";
  return /\b(Parser|Binder|Catalog|Conversion|Invalid Input|Out of Memory|Permission) Error\b/.exec(
    first,
  )?.[1];
}

/** Without the session's tables (an error before it opened), the view's own columns. */
const EVENTS_FALLBACK: TableColumns = { name: "events", columns: EVENTS_COLUMNS };

const QUOTE_GROUP =
  'group is a reserved word (GROUP BY): write the column with double quotes, "group", e.g. SELECT "group", count(*) FROM events GROUP BY "group".';

function hintFor(message: string, context: HintContext | undefined): string {
  const kind = errorKind(message);
  const words = context === undefined ? [] : sqlWords(context.sql);
  if (kind === "Permission" || /disabled by configuration/.test(message)) {
    return "only the chosen exports can be read, through the tables events, scenario_nodes and scenario_days; no other file, folder or URL.";
  }
  if (kind === "Catalog") {
    return "the tables are events (campaign CSVs), scenario_nodes and scenario_days (scenario XLSX); call query_export without sql to see their columns.";
  }
  if (kind === "Parser" && hasUnquotedGroup(words)) return QUOTE_GROUP;
  if (kind === "Binder" && /column/i.test(message.split("\n", 1)[0] ?? "")) {
    const tables = context?.tables ?? [EVENTS_FALLBACK];
    const named = tables.filter((t) => words.some((w) => w.text === t.name.toLowerCase()));
    const listed = named.length > 0 ? named : tables.filter((t) => t.name === "events");
    return `${listed.map(columnsText).join("; ")}; call query_export without sql to see every table.`;
  }
  if (kind === "Parser") {
    return "the SQL is DuckDB's dialect; quote the column \"group\"; read JSON fields with event_properties->>'amount'.";
  }
  if (kind === "Conversion" || kind === "Invalid Input") {
    return "->> binds more loosely than AND, = and IS: wrap it in parentheses, (event_properties->>'amount'); JSON fields are text, so cast them: TRY_CAST(event_properties->>'amount' AS DOUBLE).";
  }
  if (kind === "Out of Memory") {
    return "the query needs more memory than CRM_QUERY_MEMORY_MB allows; aggregate (GROUP BY) or filter before sorting or joining large sets.";
  }
  return "fix the SQL and call again; call query_export without sql to see the tables and example queries.";
}

/** "events has task_id, ..., "group" (a reserved word: quote it), ...": written as SQL names. */
function columnsText(table: TableColumns): string {
  const names = table.columns.map((c) =>
    c === "group"
      ? '"group" (a reserved word: quote it)'
      : /^[a-z_][a-z0-9_]*$/.test(c)
        ? c
        : `"${c.replaceAll('"', '""')}"`,
  );
  return `${table.name} has ${names.join(", ")}`;
}

interface Word {
  /** Lower case when bare; as written when quoted. */
  text: string;
  quoted: boolean;
}

/**
 * The statement's names and punctuation, without its string literals and comments: enough to
 * see which tables it reads and whether it writes `group` bare.
 */
const WORD = /[\p{L}\p{N}_$]+/uy;

function sqlWords(sql: string): Word[] {
  const out: Word[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i] as string;
    if (c === "'") {
      i = sql.indexOf("'", i + 1);
      while (i !== -1 && sql[i + 1] === "'") i = sql.indexOf("'", i + 2);
      i = i === -1 ? sql.length : i + 1;
    } else if (c === '"') {
      let end = sql.indexOf('"', i + 1);
      while (end !== -1 && sql[end + 1] === '"') end = sql.indexOf('"', end + 2);
      if (end === -1) end = sql.length;
      out.push({
        text: sql
          .slice(i + 1, end)
          .replaceAll('""', '"')
          .toLowerCase(),
        quoted: true,
      });
      i = end + 1;
    } else if (c === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i);
      i = end === -1 ? sql.length : end + 1;
    } else if (c === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      i = end === -1 ? sql.length : end + 2;
    } else if (/[\p{L}_]/u.test(c)) {
      WORD.lastIndex = i;
      const word = WORD.exec(sql)?.[0] ?? c;
      out.push({ text: word.toLowerCase(), quoted: false });
      i += word.length;
    } else {
      if (!/\s/.test(c)) out.push({ text: c, quoted: false });
      i++;
    }
  }
  return out;
}

/** `group` written bare where a name goes: not GROUP BY, not WITHIN GROUP (...). */
function hasUnquotedGroup(words: Word[]): boolean {
  return words.some(
    (w, k) =>
      !w.quoted &&
      w.text === "group" &&
      words[k + 1]?.text !== "by" &&
      !(words[k - 1]?.text === "within" && words[k - 1]?.quoted === false),
  );
}
