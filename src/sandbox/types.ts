import type { CsvShape } from "./csv-shape.js";
import type { World } from "./world/types.js";

/** Options of `startSandbox` and of `crm-insights-mcp sandbox`. */
export interface SandboxOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 42. */
  seed?: number;
  /** The sandbox clock's "now" (ISO 8601 or epoch ms); default the real current time. */
  now?: string | number;
  /** How long an export job stays in triggered/processing; default 3. */
  jobSeconds?: number;
  /** Pins the export/metrics secret key (e.g. a canary in tests); default a random `sbx_sk_...`. */
  secretKey?: string;
  /** Pins the recommend key; default a random `sbx_live_...`, different from `secretKey`. */
  recommendSecretKey?: string;
  /**
   * Real-time source in epoch ms (default `Date.now`). The sandbox clock is `now` plus the time
   * elapsed on this clock since start, so tests can advance it to expire download URLs.
   */
  clock?: () => number;
  /** A ready-made world instead of `createWorld({ seed, now })` (tests with hand-made data). */
  world?: World;
  /** Where export files are written; default a fresh folder under the OS temp dir, removed on close. */
  fileDir?: string;
  /**
   * A folder that keeps export jobs and their files across restarts (`jobs/<application>/`,
   * `files/`), shared by every sandbox process on it as front ends of one service; default
   * none: jobs live in memory and files in a temp folder removed on close.
   */
  dataDir?: string;
  /**
   * How campaign export CSVs are written: row order and ID spellings (csv-shape.ts); default the
   * sandbox's own (round by round, `pu_`/`u_` IDs). The same rows in every shape.
   */
  csvShape?: CsvShape;
  /**
   * The huge campaign (over MAX_SENDS_PER_EXPORT sends) as an A/B test with a control group (그룹A, 그룹B,
   * 대조군; about the same sends per round), for exports whose groups interleave. Default false.
   */
  hugeAbTest?: boolean;
}

/** The facts printed as the first stdout line of `crm-insights-mcp sandbox` (contract). */
export interface SandboxInfo {
  base_url: string;
  realtime_base_url: string;
  application_id: string;
  secret_key: string;
  recommend_secret_key: string;
  campaign_ids: string[];
  scenario_ids: string[];
  /** The slots that answer recommend (200) from the start (contract). */
  slot_keys: string[];
  /** Slots that exist but do not answer, or not yet: what a recommend call on them gets. */
  other_slots: OtherSlot[];
}

export interface OtherSlot {
  slot_key: string;
  state: "active" | "inactive" | "temporary";
  /** The HTTP status a recommend call gets (spec 4.1: 404 not active, 412 cache warming). */
  status: 404 | 412;
  /** For 412: seconds after the sandbox starts from which the slot answers. */
  answers_after_seconds?: number;
  note: string;
}

export type SandboxOperation =
  | "recommend"
  | "create_export_job"
  | "get_export_job"
  | "campaign_metrics"
  | "download";

export type FaultAction =
  /** Answer with this status (and for 429 a Retry-After value, seconds or an HTTP date). */
  | {
      type: "status";
      status: 400 | 412 | 429 | 500 | 502 | 503;
      retryAfter?: string;
      body?: string;
    }
  /** Wait before handling the request normally. */
  | { type: "delay"; ms: number }
  /** Read the request, then destroy the socket without answering. */
  | { type: "drop" }
  /**
   * Process the request normally (a create makes its job), then answer with the reply's status
   * and this body instead of the JSON (a cut-off or malformed answer to a request that worked).
   */
  | { type: "garble"; body: string }
  /** Downloads only: send the headers and this many bytes of the file, then destroy the socket. */
  | { type: "truncate"; bytes: number }
  /** Downloads only: send the file at about this many bytes per second (a slow link). */
  | { type: "throttle"; bytesPerSecond: number };

export interface FaultRule {
  operation: SandboxOperation;
  action: FaultAction;
  /** How many matching requests the rule applies to; default 1. */
  times?: number;
}

export interface FaultInjector {
  inject(rule: FaultRule): void;
  clear(): void;
  /** Requests received per operation since start (faulted ones included), for assertions. */
  readonly requestCounts: Readonly<Record<SandboxOperation, number>>;
}

/** A second, data-less application with its own keys, for "another application's key" cases. */
export interface OtherApplication {
  application_id: string;
  secret_key: string;
  recommend_secret_key: string;
}

export interface RunningSandbox extends SandboxInfo {
  readonly info: SandboxInfo;
  readonly world: World;
  readonly faults: FaultInjector;
  /** Not in the startup JSON (the contract fixes it); for tests of cross-application keys. */
  readonly otherApplication?: OtherApplication;
  close(): Promise<void>;
}
