import { safeText } from "./safe-text.js";

/** Revenue per currency from the conversion events' JSON properties. */

export const AMOUNT_KEYS = ["revenue", "amount", "price", "value", "total", "payment_amount"];
export const CURRENCY_KEYS = ["currency", "currency_code"];

/** currency -> sum of amounts and the conversion rows that held one */
export type CurrencySums = Map<string, { amount: number; conversions: number }>;

export interface RevenueAcc {
  /** every conversion row in the file */
  byCurrency: CurrencySums;
  /** conversion rows of the send groups (every group but the control group) */
  sendGroups: CurrencySums;
  /** conversion rows of the control group, whose users got no message */
  controlGroup: CurrencySums;
  amountKeys: Map<string, number>;
  currencyKeys: Map<string, number>;
  unparsed: number;
}

export function newRevenueAcc(): RevenueAcc {
  return {
    byCurrency: new Map(),
    sendGroups: new Map(),
    controlGroup: new Map(),
    amountKeys: new Map(),
    currencyKeys: new Map(),
    unparsed: 0,
  };
}

/** Adds one conversion row's revenue to the file's sums and to its group's (`control`). */
export function readRevenue(
  acc: RevenueAcc,
  json: string,
  fallbackJson: string,
  control: boolean,
): void {
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
    addAmount(acc.byCurrency, currency, amount);
    addAmount(control ? acc.controlGroup : acc.sendGroups, currency, amount);
    return;
  }
}

function addAmount(sums: CurrencySums, currency: string, amount: number): void {
  const entry = sums.get(currency);
  if (entry === undefined) {
    // A service file has a handful of currencies; the cap keeps a hostile one bounded.
    if (sums.size < 100) sums.set(currency, { amount, conversions: 1 });
  } else {
    entry.amount += amount;
    entry.conversions++;
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
