import { z } from "zod";
import { EXPORT_STATUSES, EXPORT_TYPES } from "../api/schemas.js";
import { type ClaimOwner, parseClaimOwner } from "./pending-creation.js";
import type { LedgerEntry } from "./store.js";

/** The file ledger's JSON (export-jobs-<scope>.json in the data folder). */
export interface LedgerFile {
  version: 1;
  jobs: LedgerEntry[];
  /** Epoch ms of creations the service accepted or may have (for the local budget, budget.ts). */
  create_calls: number[];
  /** Epoch ms until which the service told us (429 Retry-After) not to create. */
  rate_limited_until?: number | undefined;
  /** Running downloads by job ID: who downloads the file and until when the lease holds. */
  download_leases?: Record<string, { holder: string; expires: number }> | undefined;
  /** Pending creations by request key: who creates the job now (pending-creation.ts). */
  create_claims?: Record<string, ClaimOwner> | undefined;
}

/** The oldest entries beyond this many are dropped when a job is recorded. */
export const MAX_JOBS = 500;

export function emptyFile(): LedgerFile {
  return { version: 1, jobs: [], create_calls: [] };
}

/** What every entry must have for the tools to use it; other fields pass through. */
const entrySchema = z.looseObject({
  job_id: z.string().min(1),
  request: z.looseObject({ type: z.enum(EXPORT_TYPES) }),
  request_key: z.string(),
  requested_at: z.string(),
  status: z.enum(EXPORT_STATUSES),
  history: z.array(z.looseObject({ status: z.enum(EXPORT_STATUSES), at: z.string() })),
  job: z.looseObject({ _id: z.string(), type: z.enum(EXPORT_TYPES), status: z.string() }),
  file_path: z.string().optional(),
  file_bytes: z.number().optional(),
});

/**
 * The file, with entries that do not fit skipped (one bad entry must not hide the others);
 * `undefined` when the text is not a ledger at all.
 */
export function parseLedger(text: string): { file: LedgerFile; skipped: number } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const raw = value as { version?: unknown; jobs?: unknown; create_calls?: unknown };
  if (raw.version !== 1 || !Array.isArray(raw.jobs) || !Array.isArray(raw.create_calls)) {
    return undefined;
  }
  const jobs = raw.jobs.filter((j) => entrySchema.safeParse(j).success) as LedgerEntry[];
  const until = (value as { rate_limited_until?: unknown }).rate_limited_until;
  const leases = parseLeases((value as { download_leases?: unknown }).download_leases);
  const claims = parseClaims((value as { create_claims?: unknown }).create_claims);
  return {
    file: {
      version: 1,
      jobs,
      create_calls: raw.create_calls.filter(
        (t): t is number => typeof t === "number" && Number.isFinite(t),
      ),
      rate_limited_until: typeof until === "number" ? until : undefined,
      ...(leases === undefined ? {} : { download_leases: leases }),
      ...(claims === undefined ? {} : { create_claims: claims }),
    },
    skipped: raw.jobs.length - jobs.length,
  };
}

const leaseSchema = z.record(z.string(), z.object({ holder: z.string(), expires: z.number() }));

function parseLeases(value: unknown): LedgerFile["download_leases"] {
  const parsed = leaseSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

function parseClaims(value: unknown): LedgerFile["create_claims"] {
  if (typeof value !== "object" || value === null) return undefined;
  const claims: Record<string, ClaimOwner> = {};
  for (const [key, raw] of Object.entries(value)) {
    const owner = parseClaimOwner(raw);
    if (owner !== undefined) claims[key] = owner;
  }
  return Object.keys(claims).length === 0 ? undefined : claims;
}
