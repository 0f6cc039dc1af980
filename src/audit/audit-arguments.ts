import { printable } from "../printable.js";
import { redact } from "../redact.js";
import type { AuditCall, AuditRecord } from "./audit-record.js";

/**
 * What the trail keeps of a call: nothing that can be a key or a token, and nothing large.
 * Strings go through redact() (the configured keys and tokens, URL query strings, Authorization
 * values) and then through patterns of credentials nobody registered: JWTs (every OAuth access
 * token), `Bearer`/`Basic` values, well-known key prefixes, and long random-looking runs. A value
 * under a name like `token`, `secret` or `password` is dropped whatever it looks like.
 */
export const AUDIT_LIMITS = {
  /** Characters kept of one string (the SQL of query_export fits). */
  maxString: 2000,
  /** Items kept of one array (job_ids, item_ids). */
  maxItems: 50,
  /** Keys kept of one object. */
  maxKeys: 50,
  maxDepth: 6,
  /** The whole of one call's arguments, as JSON. */
  maxBytes: 8192,
} as const;

export const MASK = "[REDACTED]";

const SECRET_NAME =
  /secret|token|passw|passphrase|api[-_]?key|apikey|authori[sz]ation|credential|private[-_]?key|access[-_]?key|cookie|session[-_]?id|signature/i;

const PATTERNS: RegExp[] = [
  // A JWS/JWT: a header that starts with `{"` (eyJ), payload, signature (empty for alg none).
  /eyJ[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*/g,
  /\b(?:Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  // Key formats of common services, whoever they belong to.
  /\b(?:sk|pk|rk)[-_](?:[A-Za-z0-9]+[-_])?[A-Za-z0-9]{16,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{30,}/g,
  /\bglpat-[A-Za-z0-9_-]{16,}/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
];

/** 32+ characters of a base64 or hex alphabet: random-looking when it mixes cases and digits. */
const LONG_RUN = /[A-Za-z0-9_+-]{32,}={0,2}/g;

function randomLooking(run: string): boolean {
  if (/^[0-9a-fA-F]{40,}$/.test(run)) return true;
  return /[a-z]/.test(run) && /[A-Z]/.test(run) && /[0-9]/.test(run);
}

/** `text` with every credential-like part masked. */
export function scrubText(text: string): string {
  // Formats and random-looking runs first, on the text as given: a registered key masked inside
  // a token first would break the token's shape, and the rest of it would stay readable.
  let out = text;
  for (const pattern of PATTERNS) out = out.replace(pattern, MASK);
  out = out.replace(LONG_RUN, (run) => (randomLooking(run) ? MASK : run));
  return redact(out);
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…[+${text.length - max} chars]`;
}

function bound(value: unknown, depth: number): unknown {
  if (typeof value === "string") return clip(scrubText(value), AUDIT_LIMITS.maxString);
  if (typeof value === "number" || typeof value === "boolean" || value === null) return value;
  if (typeof value === "bigint") return String(value);
  if (value === undefined || typeof value === "function" || typeof value === "symbol") {
    return null;
  }
  if (depth >= AUDIT_LIMITS.maxDepth) return "[nested too deep]";
  if (Array.isArray(value)) {
    const kept = value.slice(0, AUDIT_LIMITS.maxItems).map((item) => bound(item, depth + 1));
    const more = value.length - kept.length;
    return more > 0 ? [...kept, `[+${more} more]`] : kept;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  const out: Record<string, unknown> = {};
  for (const [key, item] of entries.slice(0, AUDIT_LIMITS.maxKeys)) {
    const name = clip(scrubText(key), 100);
    out[name] = SECRET_NAME.test(key) ? MASK : bound(item, depth + 1);
  }
  if (entries.length > AUDIT_LIMITS.maxKeys) {
    out["[more keys]"] = entries.length - AUDIT_LIMITS.maxKeys;
  }
  return out;
}

/** A call's arguments as the trail keeps them: masked, and at most AUDIT_LIMITS.maxBytes. */
export function auditArguments(args: unknown): unknown {
  const bounded = bound(args ?? {}, 0);
  const text = JSON.stringify(bounded);
  const bytes = Buffer.byteLength(text);
  if (bytes <= AUDIT_LIMITS.maxBytes) return bounded;
  // Already masked: cutting the text cannot expose what was masked.
  return { "[truncated]": clip(text, 2000), bytes };
}

/** Longest tool name kept: the server's own are far shorter, a made-up one is cut. */
const MAX_TOOL = 64;
/** Longest caller name or identity part kept. */
const MAX_IDENTITY = 200;

/**
 * An identifier from a verified token or the configuration, as the trail keeps it: printable and
 * bounded. Not masked: an opaque subject looks random and is not a secret.
 */
function identity(value: unknown): string {
  return clip(printable(typeof value === "string" ? value : String(value)), MAX_IDENTITY);
}

/** The record the trail writes for `call`. */
export function auditRecord(call: AuditCall): AuditRecord {
  const { caller } = call;
  return {
    at: new Date(call.at).toISOString(),
    caller: identity(caller.name),
    caller_kind: caller.kind,
    ...(caller.issuer === undefined ? {} : { issuer: identity(caller.issuer) }),
    ...(caller.subject === undefined ? {} : { subject: identity(caller.subject) }),
    ...(caller.clientId === undefined ? {} : { client_id: identity(caller.clientId) }),
    // A tool name is whatever the client sent when the call was refused before dispatch.
    tool: clip(printable(scrubText(String(call.tool))), MAX_TOOL),
    arguments: auditArguments(call.args),
    outcome: call.outcome,
    ...(call.error === undefined ? {} : { error: clip(printable(scrubText(call.error)), 100) }),
    duration_ms: Math.max(0, Math.round(call.durationMs)),
  };
}
