import type { z } from "zod";
import type { BudgetStatus } from "../ledger/budget.js";
import type { budgetOutput } from "./job-result-schema.js";

// How the export tools tell the creation budget and an export's date range, in text and in
// structuredContent: one wording everywhere.

export function describeBudget(budget: BudgetStatus): string {
  return `Export budget: ${budget.used}/${budget.limit} creations used in the last ${windowText(budget.windowSeconds)}.`;
}

/** A budget window the way every text says it: "10 min", or seconds when not whole minutes. */
export function windowText(seconds: number): string {
  return seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds}s`;
}

/** An export's inclusive date range, the same way in every text. */
export function describeRange(from: string | undefined, to: string | undefined): string {
  if (from === undefined && to === undefined) return "all rounds";
  return `${from ?? "(no start)"} to ${to ?? "(no end)"} (inclusive)`;
}

export function budgetForOutput(budget: BudgetStatus): z.output<typeof budgetOutput> {
  return {
    used: budget.used,
    limit: budget.limit,
    window_seconds: budget.windowSeconds,
    next_slot_at:
      budget.nextSlotAt === undefined ? undefined : new Date(budget.nextSlotAt).toISOString(),
  };
}
