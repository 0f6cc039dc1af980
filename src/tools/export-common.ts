import type { z } from "zod";
import type { BudgetStatus } from "../ledger/budget.js";
import { type budgetOutput, MAX_WAIT_SECONDS } from "./params.js";
import { ToolInputError } from "./tool-errors.js";

export function checkWaitSeconds(value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isFinite(value) || value < 0 || value > MAX_WAIT_SECONDS) {
    throw new ToolInputError(
      "wait_seconds",
      `wait_seconds must be between 0 and ${MAX_WAIT_SECONDS}; got ${value}. For longer jobs call check_export again with the job_id.`,
    );
  }
  return value;
}

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
