import type { Change } from "./config-file.js";
import { InstallError } from "./server-entry.js";
import { TomlReadError, type TomlStatement, tomlStatements } from "./toml-statements.js";

/**
 * Codex keeps its servers in config.toml, one `[mcp_servers.NAME]` table each with `command`,
 * `args` and an `[mcp_servers.NAME.env]` table. There is no TOML library here: the server's own
 * tables are written by hand, appended to the file or put where the old ones were, and every
 * other byte of the file stays as the user wrote it (comments included). A file whose server of
 * that name is written in any other form (dotted keys, an inline table) is left alone, with the
 * table to paste.
 */

export interface CodexEntry {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/**
 * Codex's own limit for one tool call is 60 s by default; campaign_metrics may spend
 * CRM_METRICS_CALL_SECONDS (90 by default) on its requests.
 */
const TOOL_TIMEOUT_SECONDS = 120;

/** The server's tables, as `install codex` writes them (lines end with `eol`). */
export function codexTables(name: string, entry: CodexEntry, eol = "\n"): string {
  const table = `mcp_servers.${tomlKey(name)}`;
  const lines = [
    `[${table}]`,
    `command = ${tomlString(entry.command)}`,
    `args = [${entry.args.map(tomlString).join(", ")}]`,
    `tool_timeout_sec = ${TOOL_TIMEOUT_SECONDS}`,
  ];
  const env = Object.entries(entry.env ?? {});
  if (env.length > 0) {
    lines.push("", `[${table}.env]`, ...env.map(([k, v]) => `${tomlKey(k)} = ${tomlString(v)}`));
  }
  return `${lines.join(eol)}${eol}`;
}

/** A TOML basic string: quotes, backslashes and control characters escaped. */
export function tomlString(value: string): string {
  let out = '"';
  for (const ch of value) {
    const code = ch.codePointAt(0) as number;
    if (ch === '"' || ch === "\\") out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\r") out += "\\r";
    else if (code < 0x20 || code === 0x7f) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else out += ch;
  }
  return `${out}"`;
}

function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : tomlString(key);
}

/**
 * Puts the server's tables into `current` (the file's text, or undefined when there is none):
 * appended, or with `force` in place of the server's old tables.
 */
export function withCodexServer(
  current: string | undefined,
  file: string,
  name: string,
  entry: CodexEntry,
  force: boolean,
): Change {
  const text = current ?? "";
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const tables = codexTables(name, entry, eol);
  const manually = `the [mcp_servers.${tomlKey(name)}] table yourself (the same install command with --print shows it). Nothing was written.`;
  let statements: TomlStatement[];
  try {
    statements = tomlStatements(text);
  } catch (error) {
    if (!(error instanceof TomlReadError)) throw error;
    throw new InstallError(
      `${file} is not TOML that install can read (${error.message}). Fix it, or add ${manually}`,
    );
  }

  const { kept, own, elsewhere } = findServer(statements, name);
  const exists = own.length > 0 || elsewhere.some((s) => s.path[1] === name);
  if (elsewhere.length === 0 && sameTables(text, own, tables)) {
    return { text: "", replaced: false, kept, unchanged: true };
  }
  if (exists && !force) {
    throw new InstallError(
      `${file} already has a server named "${name}". Run again with --force to replace it (the old file is kept as a backup), or with --name to add this one under another name. Nothing was written.`,
    );
  }
  if (elsewhere.length > 0) {
    const line = text.slice(0, (elsewhere[0] as TomlStatement).start).split("\n").length;
    throw new InstallError(
      `${file} writes ${exists ? `"${name}"` : "mcp_servers"} in a form install does not edit (line ${line}: an inline table, dotted keys or an array of tables). Add ${manually}`,
    );
  }

  if (own.length === 0) {
    const separator = text === "" ? "" : text.endsWith("\n") ? eol : `${eol}${eol}`;
    return { text: `${text}${separator}${tables}`, replaced: false, kept, unchanged: false };
  }
  const first = own[0];
  let out = "";
  let at = 0;
  for (const table of own) {
    out += text.slice(at, table.start);
    if (table === first) out += tables;
    at = table.end;
  }
  out += text.slice(at);
  return { text: out, replaced: true, kept, unchanged: false };
}

interface FoundServer {
  /** The other servers' names. */
  kept: string[];
  /** The server's own tables. */
  own: Section[];
  /**
   * Statements that write the server (or mcp_servers as a whole) outside tables of its own:
   * dotted keys, an inline table, an array of tables.
   */
  elsewhere: TomlStatement[];
}

function findServer(statements: TomlStatement[], name: string): FoundServer {
  const inServers = statements.filter((s) => s.path[0] === "mcp_servers");
  const kept = [...new Set(inServers.map((s) => s.path[1]))].filter(
    (n): n is string => n !== undefined && n !== name,
  );
  const own = sectionsOf(statements, name);
  const ownStatements = new Set(own.flatMap((t) => t.statements));
  const elsewhere = inServers.filter(
    (s) =>
      !ownStatements.has(s) &&
      s.kind !== "header" &&
      (s.path[1] === name || s.path.length === 1 || s.kind === "array-header"),
  );
  return { kept, own, elsewhere };
}

interface Section {
  /** Offset of its header. */
  start: number;
  /** Offset past the line of its last statement: comments and blank lines after it stay. */
  end: number;
  statements: TomlStatement[];
}

/** The `[mcp_servers.NAME]` and `[mcp_servers.NAME.*]` tables with the keys in each. */
function sectionsOf(statements: TomlStatement[], name: string): Section[] {
  const sections: Section[] = [];
  let current: Section | undefined;
  for (const s of statements) {
    if (s.kind !== "key") {
      current = undefined;
      if (s.kind === "header" && s.path[0] === "mcp_servers" && s.path[1] === name) {
        current = { start: s.start, end: s.end, statements: [s] };
        sections.push(current);
      }
    } else if (current !== undefined) {
      current.statements.push(s);
      current.end = s.end;
    }
  }
  return sections;
}

/** The server's tables stand one after the other and read exactly as `tables`. */
function sameTables(text: string, own: Section[], tables: string): boolean {
  const first = own[0];
  const last = own[own.length - 1];
  if (first === undefined || last === undefined) return false;
  const apart = own.some((t, n) => n > 0 && text.slice(own[n - 1]?.end, t.start).trim() !== "");
  return !apart && normalize(text.slice(first.start, last.end)) === normalize(tables);
}

function normalize(tables: string): string {
  return tables.replace(/\r\n/g, "\n").trim();
}
