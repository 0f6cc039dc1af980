import { safeText } from "./safe-text.js";

/** Revenue per currency from the conversion events' JSON properties. */

export const AMOUNT_KEYS = ["revenue", "amount", "price", "value", "total", "payment_amount"];
export const CURRENCY_KEYS = ["currency", "currency_code"];

export interface RevenueAcc {
  byCurrency: Map<string, { amount: number; conversions: number }>;
  amountKeys: Map<string, number>;
  currencyKeys: Map<string, number>;
  unparsed: number;
}

export function readRevenue(acc: RevenueAcc, json: string, fallbackJson: string): void {
  for (const text of [json, fallbackJson]) {
    if (text === "" || text === "{}") continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      acc.unparsed++;
      continue;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) continue;
    const props = value as Record<string, unknown>;
    let amount: number | undefined;
    for (const key of AMOUNT_KEYS) {
      const raw = props[key];
      const n = typeof raw === "number" ? raw : typeof raw === "string" ? Number(raw) : Number.NaN;
      if (raw !== "" && Number.isFinite(n)) {
        amount = n;
        acc.amountKeys.set(key, (acc.amountKeys.get(key) ?? 0) + 1);
        break;
      }
    }
    if (amount === undefined) continue;
    let currency = "(none)";
    for (const key of CURRENCY_KEYS) {
      const raw = props[key];
      if (typeof raw === "string" && raw.trim() !== "") {
        currency = safeText(raw, 12).toUpperCase();
        acc.currencyKeys.set(key, (acc.currencyKeys.get(key) ?? 0) + 1);
        break;
      }
    }
    const entry = acc.byCurrency.get(currency);
    if (entry === undefined) {
      if (acc.byCurrency.size < 100) acc.byCurrency.set(currency, { amount, conversions: 1 });
    } else {
      entry.amount += amount;
      entry.conversions++;
    }
    return;
  }
}

export function mostUsed(keys: Map<string, number>): string | null {
  let best: string | null = null;
  let bestCount = 0;
  for (const [key, count] of keys) {
    if (count > bestCount) {
      best = key;
      bestCount = count;
    }
  }
  return best;
}
