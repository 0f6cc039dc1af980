import { redact } from "./redact.js";

type Level = "debug" | "info" | "warn" | "error";
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Minimum level from CRM_LOG_LEVEL; stdout belongs to the MCP protocol, so logs go to stderr. */
let threshold: number = ORDER[(process.env.CRM_LOG_LEVEL as Level | undefined) ?? "info"] ?? 20;

export function setLogLevel(level: Level): void {
  threshold = ORDER[level];
}

function write(level: Level, message: string, fields?: Record<string, unknown>): void {
  if (ORDER[level] < threshold) return;
  const extra = fields === undefined ? "" : ` ${safeJson(fields)}`;
  process.stderr.write(redact(`[crm-insights-mcp] ${level}: ${message}${extra}`).concat("\n"));
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
