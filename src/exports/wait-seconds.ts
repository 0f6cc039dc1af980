/**
 * How long one start_export or check_export call follows a job and its file (`wait_seconds`):
 * the job goes on after, and the answer gives the check_export call that continues.
 */
export const MAX_WAIT_SECONDS = 50;
export const DEFAULT_WAIT_SECONDS = 20;
