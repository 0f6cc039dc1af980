import { printable } from "./printable.js";
import { redact } from "./redact.js";

export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
type Level = LogLevel;
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

function isLogLevel(value: string | undefined): value is LogLevel {
  return (LOG_LEVELS as readonly (string | undefined)[]).includes(value);
}

/**
 * Stdout belongs to the MCP protocol, so logs go to stderr. The server sets the level from its
 * validated config (CRM_LOG_LEVEL, see config.ts); until then, and for the `sandbox` and
 * `summarize` commands that read no server config, a valid CRM_LOG_LEVEL is honoured here and
 * anything else means `info`.
 */
const fromEnv = process.env.CRM_LOG_LEVEL?.trim().toLowerCase();
let threshold: number = ORDER[isLogLevel(fromEnv) ? fromEnv : "info"];

export function setLogLevel(level: Level): void {
  threshold = ORDER[level];
}

/** Receives every message, whatever the stderr level (the MCP client sets its own). */
export type LogForwarder = (
  level: Level,
  message: string,
  fields?: Record<string, unknown>,
) => void;
const forwarders = new Set<LogForwarder>();

/**
 * Adds a receiver of every message (the MCP logging bridge, mcp/call-log.ts); returns its
 * removal. Receivers are added beside each other, never in place of one: a second one (a test
 * watching the log) must not cut the bridge off.
 */
export function addLogForwarder(forwarder: LogForwarder): () => void {
  forwarders.add(forwarder);
  return () => {
    forwarders.delete(forwarder);
  };
}

/** The level in force, so a caller that raised it for a while can put it back. */
export function getLogLevel(): Level {
  return LOG_LEVELS.find((level) => ORDER[level] === threshold) ?? "info";
}

function write(level: Level, message: string, fields?: Record<string, unknown>): void {
  for (const forward of forwarders) forward(level, message, fields);
  if (ORDER[level] < threshold) return;
  const extra = fields === undefined ? "" : ` ${safeJson(fields)}`;
  // One line per event, whatever a message quotes: a caller's name or a tool name made up by a
  // client must not move the cursor or forge a line on the operator's terminal.
  const line = printable(redact(`[crm-insights-mcp] ${level}: ${message}${extra}`));
  process.stderr.write(`${line}\n`);
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

export const log = {
  debug: (message: string, fields?: Record<string, unknown>) => write("debug", message, fields),
  info: (message: string, fields?: Record<string, unknown>) => write("info", message, fields),
  warn: (message: string, fields?: Record<string, unknown>) => write("warn", message, fields),
  error: (message: string, fields?: Record<string, unknown>) => write("error", message, fields),
};
