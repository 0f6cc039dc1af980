import type { CatalogueStore } from "./store.js";
import type { WorkLimits } from "./work-engine.js";

/** What every history operation needs: its folder, its catalogue, its engine's limits, clocks. */
export interface HistoryContext {
  folder: string;
  store: CatalogueStore;
  work: WorkLimits;
  /** Epoch ms (the runtime's clock: the sandbox's in sandbox mode). */
  now(): number;
  /** The first round date kept (`YYYY-MM-DD`, from CRM_HISTORY_DAYS and the app's zone). */
  cutoff(): string;
}

/**
 * The first date kept when `keepDays` days are kept: today in `timeZone` minus that many days
 * (a round scheduled on the cutoff date is kept; one the day before is not).
 */
export function cutoffDate(now: number, timeZone: string, keepDays: number): string {
  const today = new Intl.DateTimeFormat("en-CA", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  }).format(now);
  const day = new Date(`${today}T00:00:00Z`);
  day.setUTCDate(day.getUTCDate() - keepDays);
  return day.toISOString().slice(0, 10);
}
