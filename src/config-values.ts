import { statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { DateTime, IANAZone } from "luxon";
import { z } from "zod";
import { LOG_LEVELS } from "./log.js";
import { isLoopbackHost } from "./loopback-host.js";

/** Default budget of structuredContent, in estimated tokens. */
export const DEFAULT_RESULT_TOKENS = 8_000;
/** Never above this, whatever the configuration: below Claude Code's 25,000-token cut. */
export const MAX_RESULT_TOKENS = 20_000;

/**
 * The checks of single environment values (keys, URLs, zones, hosts, numbers, the budget), each a
 * zod schema whose message says what is wrong; config.ts reads the variables with them.
 */

export const optionalText = z.string().optional();

export const databaseUrlSchema = z
  .string()
  .optional()
  .refine((value) => {
    if (value === undefined) return true;
    try {
      return ["postgres:", "postgresql:"].includes(new URL(value).protocol);
    } catch {
      return false;
    }
  }, "must be a postgres:// or postgresql:// URL");

/** Shorter keys could not be masked safely in output (see redact.ts), and no real key is this short. */
const MIN_KEY_LENGTH = 8;

/**
 * An example configuration's stand-in for a key (`<your secret key>`, `...`, `YOUR_SECRET_KEY`):
 * refused by name, because the service would only answer "authentication failed" later.
 */
function isPlaceholderKey(value: string): boolean {
  return (
    /^<.*>$/s.test(value) ||
    /^\$\{.*\}$/s.test(value) ||
    /^[.…*xX]+$/.test(value) ||
    /^(your|my)[-_ ]/i.test(value) ||
    /^(changeme|placeholder|secret)$/i.test(value)
  );
}

// A line break or other control character would break the Authorization header (or smuggle one).
// One message per value, the most useful first: a placeholder is named as such before its spaces.
export const optionalKey = z
  .string()
  .optional()
  .superRefine((value, ctx) => {
    if (value === undefined) return;
    if (isPlaceholderKey(value)) {
      ctx.addIssue({
        code: "custom",
        message:
          "is still a placeholder from an example configuration; replace it with the key itself",
      });
    } else if (!/^[!-~]+$/.test(value)) {
      ctx.addIssue({
        code: "custom",
        message: "must be printable ASCII without spaces or control characters",
      });
    } else if (value.length < MIN_KEY_LENGTH) {
      ctx.addIssue({
        code: "custom",
        message: `is too short to be a secret key (at least ${MIN_KEY_LENGTH} characters); check that the whole key was copied`,
      });
    }
  });

/** CRM_HISTORY: `on` or `off`, any case. */
export const historySwitchSchema = z
  .string()
  .optional()
  .transform((value) => value?.toLowerCase())
  .pipe(z.enum(["on", "off"], { message: "must be on or off" }).optional());

export const logLevelSchema = z
  .string()
  .optional()
  .transform((value) => value?.toLowerCase())
  .pipe(z.enum(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(", ")}` }).optional());

export const optionalUrl = z
  .string()
  .optional()
  .superRefine((value, ctx) => {
    if (value === undefined) return;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: "custom", message: "not a URL" });
      return;
    }
    if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackHost(url.hostname))) {
      ctx.addIssue({
        code: "custom",
        message: "must be an https URL (plain http only for loopback hosts)",
      });
    }
    if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
      ctx.addIssue({
        code: "custom",
        message: "must be a bare base URL without query, fragment or credentials",
      });
    }
  })
  .transform((value) => (value === undefined ? undefined : value.replace(/\/+$/, "")));

export const timeZoneSchema = z
  .string()
  .optional()
  .refine((value) => value === undefined || IANAZone.isValidZone(value), {
    message: "not a known IANA time zone",
  });

export const hostList = z
  .string()
  .optional()
  .transform((value, ctx) => {
    if (value === undefined) return undefined;
    const hosts = value
      .split(",")
      .map((h) => h.trim().toLowerCase())
      .filter((h) => h !== "");
    const bad = hosts.find((h) => !/^[a-z0-9.-]+$/.test(h) && !/^\[[0-9a-f:.]+\]$/.test(h));
    if (bad !== undefined || hosts.length === 0) {
      ctx.addIssue({
        code: "custom",
        message: "must be host names separated by commas, without scheme, port or path",
      });
      return z.NEVER;
    }
    return hosts;
  });

export const positiveNumber = z.coerce
  .number({ message: "not a number" })
  .positive({ message: "must be greater than 0" })
  .optional();
export const nonNegativeNumber = z.coerce
  .number({ message: "not a number" })
  .min(0, { message: "must be 0 or more" })
  .optional();
export const integer = z.coerce
  .number({ message: "not a number" })
  .int({ message: "not an integer" })
  .optional();

/** A whole number within [min, max], for the query engine's memory, threads and timeout. */
export function boundedInteger(min: number, max: number) {
  return z.coerce
    .number({ message: "not a number" })
    .int({ message: "not an integer" })
    .min(min, { message: `must be at least ${min}` })
    .max(max, { message: `must be at most ${max}` })
    .optional();
}

export const resultTokensSchema = z.coerce
  .number({ message: "not a number" })
  .int({ message: "not an integer" })
  .min(1_000, { message: "must be at least 1000" })
  .max(MAX_RESULT_TOKENS, {
    message: `must be at most ${MAX_RESULT_TOKENS} (Claude Code cuts tool output at 25,000 tokens)`,
  })
  .optional();

export const optionalIsoDateTime = z
  .string()
  .optional()
  // Date.parse accepts almost anything ("1", "May 5"); luxon reads only ISO 8601.
  .refine((value) => value === undefined || DateTime.fromISO(value, { setZone: true }).isValid, {
    message: "not an ISO 8601 date-time",
  });

export const budgetSchema = z
  .string()
  .optional()
  .transform((value, ctx) => {
    if (value === undefined) return undefined;
    const match = /^(\d+)\s*\/\s*(\d+)$/.exec(value);
    const count = Number(match?.[1]);
    const windowSeconds = Number(match?.[2]);
    if (match === null || count < 1 || windowSeconds < 1) {
      ctx.addIssue({
        code: "custom",
        message: "must be N/SECONDS with N and SECONDS at least 1",
      });
      return z.NEVER;
    }
    return { count, windowSeconds };
  });

/**
 * CRM_READ_DIRS: folders, comma-separated, each absolute (or `~/...`, as CRM_DATA_DIR) and an
 * existing folder. Checked here, once, so that a typo stops the server at start-up instead of
 * refusing every file later; every problem of the list is named in one message.
 */
export function readDirList(homeDir: string) {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return [];
      const entries = value.split(",").map((entry) => entry.trim());
      const problems: string[] = [];
      if (entries.some((entry) => entry === "")) {
        problems.push("it has an empty entry (two commas in a row, or one at an end)");
      }
      const folders: string[] = [];
      for (const entry of entries.filter((e) => e !== "")) {
        const expanded =
          entry === "~" || entry.startsWith("~/") ? join(homeDir, entry.slice(1)) : entry;
        const problem = folderProblem(expanded);
        if (problem === undefined) folders.push(resolve(expanded));
        else problems.push(`${JSON.stringify(entry)} ${problem}`);
      }
      if (problems.length > 0) {
        ctx.addIssue({
          code: "custom",
          message: `${problems.join("; ")}; give existing folders as absolute paths, separated by commas`,
        });
        return z.NEVER;
      }
      return [...new Set(folders)];
    });
}

/** What keeps `path` from being a folder to read from, or undefined when nothing does. */
function folderProblem(path: string): string | undefined {
  if (!isAbsolute(path)) return "is a relative path";
  try {
    return statSync(path).isDirectory() ? undefined : "is not a folder";
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" || code === "ENOTDIR" ? "does not exist" : `cannot be read (${code})`;
  }
}

/** A switch: `1`/`true`/`on` or `0`/`false`/`off` (any case); unset is off. */
export const onOffSwitch = z
  .string()
  .optional()
  .transform((value, ctx) => {
    if (value === undefined) return false;
    const word = value.toLowerCase();
    if (["1", "true", "on"].includes(word)) return true;
    if (["0", "false", "off"].includes(word)) return false;
    ctx.addIssue({ code: "custom", message: "must be 1 (on) or 0 (off)" });
    return z.NEVER;
  });
