import { describe, expect, it } from "vitest";
import { newRevenueAcc, readRevenue } from "../../../src/analysis/campaign/revenue.js";

describe("readRevenue", () => {
  it("reads the amount from the properties, else from the custom properties, and says what it could not parse", () => {
    const acc = newRevenueAcc();
    readRevenue(acc, '{"revenue": 12000, "currency": "KRW"}', '{"amount": 5}', false);
    // No amount in the properties (an empty string is none): the custom properties give it.
    readRevenue(
      acc,
      '{"revenue": "", "note": 1}',
      '{"amount": "26.74", "currency_code": " usd "}',
      true,
    );
    // Unparsable properties are counted, and the custom properties still read.
    readRevenue(acc, "{not json", '{"price": 3000, "currency": "krw"}', false);
    // Neither holds an amount: nothing added; an array is not properties.
    readRevenue(acc, "[1, 2]", '{"currency": "KRW"}', false);
    // An amount without a currency goes under (none); the same spelling twice reads alike.
    readRevenue(acc, '{"value": 7}', "{}", false);
    readRevenue(acc, '{"payment_amount": 1.5, "currency_code": " usd "}', "", false);

    expect(acc.unparsed).toBe(1);
    expect(Object.fromEntries(acc.byCurrency)).toEqual({
      KRW: { micros: 15_000_000_000n, conversions: 2 },
      USD: { micros: 28_240_000n, conversions: 2 },
      "(none)": { micros: 7_000_000n, conversions: 1 },
    });
    expect(Object.fromEntries(acc.controlGroup)).toEqual({
      USD: { micros: 26_740_000n, conversions: 1 },
    });
    expect(acc.sendGroups.get("KRW")?.conversions).toBe(2);
    expect(Object.fromEntries(acc.amountKeys)).toEqual({
      revenue: 1,
      amount: 1,
      price: 1,
      value: 1,
      payment_amount: 1,
    });
    expect(Object.fromEntries(acc.currencyKeys)).toEqual({ currency: 2, currency_code: 2 });
  });
});
