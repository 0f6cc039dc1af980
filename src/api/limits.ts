import { formatCount } from "../format.js";
/**
 * The service's limits (spec section 8), in one place for the client, the tools' texts and their
 * checks: every other module reads them from here. The sandbox reads the spec on its own
 * (sandbox/spec.ts), so that a misreading on either side shows up as a failing test.
 */

/** Recommend `limit`: 1 to 1000, default 10. */
export const RECOMMEND_LIMIT_MIN = 1;
export const RECOMMEND_LIMIT_MAX = 1000;
export const RECOMMEND_LIMIT_DEFAULT = 10;

/** Export job creation: 10 calls per 10 minutes per application, then 429 with Retry-After. */
export const EXPORT_CREATE_LIMIT = 10;
export const EXPORT_CREATE_WINDOW_SECONDS = 10 * 60;

/**
 * A campaign export range: at most 2,000,000 sends summed over its aggregated rounds and at most
 * 120 rounds (A/B groups count separately); more gives 400 `LimitExceeded`.
 */
export const EXPORT_MAX_SENDS = 2_000_000;
export const EXPORT_MAX_ROUNDS = 120;

/**
 * Rounds one task of an A/B test counts toward EXPORT_MAX_ROUNDS when an export is planned. A
 * round is a task, its scheduled time and a group (spec 2.4) and the groups count separately
 * (spec 8); the groups the spec names are two send groups (`그룹A`, `그룹B`) and the control group
 * (`대조군`), a round of its own though it sends nothing. campaign_metrics does not say which a
 * test has, so each A/B task counts all three: a split finer than needed costs one creation more
 * of the budget, one too coarse is refused (LimitExceeded) and costs a retry besides.
 */
export const EXPORT_AB_ROUNDS_PER_TASK = 3;

/** Export jobs may be polled at most once per this many seconds. */
export const MIN_POLL_INTERVAL_SECONDS = 5;

/** A download URL stays valid this long after it was made. */
export const DOWNLOAD_URL_VALIDITY_HOURS = 24;

/** The metrics endpoint's largest window between `task_from` and `task_to`. */
export const MAX_METRICS_WINDOW_DAYS = 180;

/**
 * Not stated by the service: how long after a round's conversion deadline we expect its
 * performance aggregation to have finished (spec 4.2 rule 4: only aggregated rounds go into an
 * export). An estimate on the safe side, used to say which recent rounds an export may lack.
 */
export const AGGREGATION_GRACE_HOURS = 24;

/**
 * Numbers as the texts write them: "2,000,000". Not toLocaleString: this runs as the module
 * loads, and the first toLocaleString of a process loads the locale data (about 10 ms of every
 * start of the server and of the summary's command).
 */
export const sendsText: (n: number) => string = formatCount;

/** The export size limit the way every text says it. */
export const EXPORT_SIZE_LIMIT_TEXT = `${sendsText(EXPORT_MAX_SENDS)} sends or more than ${EXPORT_MAX_ROUNDS} rounds`;
