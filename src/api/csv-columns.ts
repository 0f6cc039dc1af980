/**
 * The campaign CSV's 13 columns in order (spec 2.4). Kept apart from schemas.ts so that the
 * summary's worker threads, which need only these names, do not load zod (about 100 ms of a
 * worker's start).
 */
export const CAMPAIGN_CSV_COLUMNS = [
  "task_id",
  "scheduled_at",
  "group",
  "event_type",
  "user_id",
  "platform_user_id",
  "captured_at",
  "channel",
  "error_code",
  "error_message",
  "event_properties",
  "custom_event_properties",
  "internal_event_properties",
] as const;
