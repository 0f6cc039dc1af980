import { safeText } from "../safe-text.js";

/** Revenue per currency from the conversion events' JSON properties. */

export const AMOUNT_KEYS = ["revenue", "amount", "price", "value", "total", "payment_amount"];
export const CURRENCY_KEYS = ["currency", "currency_code"];

/**
 * currency -> sum of amounts and the conversion rows that held one. Amounts are summed as whole
 * millionths in a bigint: exact, so the sum is the same whatever the order of the rows or how a
 * file was split between threads (floating-point sums are not).
 */
export type CurrencySums = Map<string, { micros: bigint; conversions: number }>;

/** Most currencies kept per sum; a service file has a handful. */
const MAX_CURRENCIES = 100;

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
  /** a currency beyond MAX_CURRENCIES was left out (then partial sums cannot be merged exactly) */
  capped: boolean;
}

export function newRevenueAcc(): RevenueAcc {
  return {
    byCurrency: new Map(),
    sendGroups: new Map(),
    controlGroup: new Map(),
    amountKeys: new Map(),
    currencyKeys: new Map(),
    unparsed: 0,
    capped: false,
  };
}

/**
 * Adds one conversion row's revenue to the file's sums and to its group's (`control`): from its
 * properties, or else from its custom properties. In small functions, each currency cleaned once:
 * V8 compiles this once per reading thread, and small functions take less of a core to compile
 * than one large one.
 */
export function readRevenue(
  acc: RevenueAcc,
  json: string,
  fallbackJson: string,
  control: boolean,
): void {
  if (!readProperties(acc, json, control)) readProperties(acc, fallbackJson, control);
}

/** True when `text` held an amount, which was added. */
function readProperties(acc: RevenueAcc, text: string, control: boolean): boolean {
  if (text === "" || text === "{}") return false;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    acc.unparsed++;
    return false;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const props = value as Record<string, unknown>;
  let amount = Number.NaN;
  for (let k = 0; k < AMOUNT_KEYS.length; k++) {
    const key = AMOUNT_KEYS[k] as string;
    const raw = props[key];
    const n = typeof raw === "number" ? raw : typeof raw === "string" ? Number(raw) : Number.NaN;
    if (raw !== "" && Number.isFinite(n)) {
      amount = n;
      countKey(acc.amountKeys, key);
      break;
    }
  }
  if (Number.isNaN(amount)) return false;
  let currency = "(none)";
  for (let k = 0; k < CURRENCY_KEYS.length; k++) {
    const key = CURRENCY_KEYS[k] as string;
    const raw = props[key];
    if (typeof raw === "string" && raw.trim() !== "") {
      currency = currencyName(raw);
      countKey(acc.currencyKeys, key);
      break;
    }
  }
  const micros = BigInt(Math.round(amount * 1e6));
  addAmount(acc, acc.byCurrency, currency, micros, 1);
  addAmount(acc, control ? acc.controlGroup : acc.sendGroups, currency, micros, 1);
  return true;
}

function countKey(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/**
 * Currencies as read, cleaned once each: a file has a handful. Short spellings only, and a few
 * hundred of them, so what a hostile file leaves here stays small.
 */
const currencyNames = new Map<string, string>();

function currencyName(raw: string): string {
  let name = currencyNames.get(raw);
  if (name === undefined) {
    name = safeText(raw, 12).toUpperCase();
    if (raw.length <= 32 && currencyNames.size < 4 * MAX_CURRENCIES) currencyNames.set(raw, name);
  }
  return name;
}

function addAmount(
  acc: RevenueAcc,
  sums: CurrencySums,
  currency: string,
  micros: bigint,
  conversions: number,
): void {
  const entry = sums.get(currency);
  if (entry === undefined) {
    // The cap keeps a hostile file bounded.
    if (sums.size < MAX_CURRENCIES) sums.set(currency, { micros, conversions });
    else acc.capped = true;
  } else {
    entry.micros += micros;
    entry.conversions += conversions;
  }
}

/** The amount of a sum, as a number. */
export function amountOf(micros: bigint): number {
  const whole = micros / 1_000_000n;
  return Number(whole) + Number(micros - whole * 1_000_000n) / 1e6;
}

/** Adds another part of the file's revenue (see tally.ts) into `acc`. */
export function mergeRevenue(acc: RevenueAcc, part: RevenueAcc): void {
  const sums: [CurrencySums, CurrencySums][] = [
    [acc.byCurrency, part.byCurrency],
    [acc.sendGroups, part.sendGroups],
    [acc.controlGroup, part.controlGroup],
  ];
  for (const [into, from] of sums) {
    for (const [currency, v] of from) addAmount(acc, into, currency, v.micros, v.conversions);
  }
  for (const [key, n] of part.amountKeys)
    acc.amountKeys.set(key, (acc.amountKeys.get(key) ?? 0) + n);
  for (const [key, n] of part.currencyKeys) {
    acc.currencyKeys.set(key, (acc.currencyKeys.get(key) ?? 0) + n);
  }
  acc.unparsed += part.unparsed;
  acc.capped ||= part.capped;
}

/** The key used most; a tie goes to the key listed first in `order` (not to the file's order). */
export function mostUsed(keys: Map<string, number>, order: readonly string[]): string | null {
  let best: string | null = null;
  let bestCount = 0;
  for (const key of order) {
    const count = keys.get(key) ?? 0;
    if (count > bestCount) {
      best = key;
      bestCount = count;
    }
  }
  return best;
}
