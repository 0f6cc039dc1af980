import type { DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  conversionTypeOf,
  eventRoleSql,
  ROLES,
  type Role,
  roleOf,
} from "../../src/analysis/event-roles.js";
import { loadDuckDb } from "../../src/query/engine.js";

/**
 * summarize_export counts with roleOf; query_export's event_role column is eventRoleSql run by
 * DuckDB. Both come from one rule table: here they are run side by side on arbitrary names.
 */

let instance: DuckDBInstance;
let connection: DuckDBConnection;

beforeAll(async () => {
  const duck = await loadDuckDb();
  instance = await duck.DuckDBInstance.create(":memory:");
  connection = await instance.connect();
});
afterAll(() => {
  connection?.closeSync();
  instance?.closeSync();
});

/** event_role of each name (null: an empty field) as DuckDB computes it. */
async function sqlRoles(names: (string | null)[], conversionType: string | undefined) {
  await connection.run("CREATE OR REPLACE TEMP TABLE names (i INTEGER, event_type VARCHAR)");
  const appender = await connection.createAppender("names");
  names.forEach((name, i) => {
    appender.appendInteger(i);
    if (name === null) appender.appendNull();
    else appender.appendVarchar(name);
    appender.endRow();
  });
  appender.flushSync();
  appender.closeSync();
  const reader = await connection.runAndReadAll(
    `SELECT ${eventRoleSql("event_type", conversionType)} FROM names ORDER BY i`,
  );
  return reader.getRowsJS().map((row) => row[0]);
}

const FIXED = ["message_sent", "message_received", "message_failed", "control_assigned"];
const TRICKY = [
  ...FIXED,
  "landing_clicked",
  "push_opened",
  "email_link_clicked",
  "friendtalk_button_clicked",
  "purchase",
  "order_completed",
  "_clicked",
  "_opened",
  "clicked",
  "opened",
  "x_clickedx",
  "landing_clicked ",
  " message_sent",
  "MESSAGE_SENT",
  "Push_Opened",
  "push_OPENED",
  "message_sent\n",
  "a%_clicked",
  "a_clicke",
  "%",
  "_",
  "%_opened",
  "'",
  "''_clicked",
  "it's_opened",
  '"',
  '"quoted"',
  "\\",
  "\\_clicked",
  "\0",
  "purchase\0_clicked",
  "구매_완료",
  "쿠폰_clicked",
  "🎉_opened",
  "é_clicked",
  "e\u0301_clicked",
  "\u202e_opened",
  "",
  " ",
];

/** Text a CSV field can hold: any code point (no lone surrogates, which UTF-8 cannot carry). */
const anyText = fc.string({ unit: "binary", maxLength: 24 }).filter((s) => !/\p{Cs}/u.test(s));
const name = fc.oneof(
  fc.constantFrom(...TRICKY),
  fc
    .tuple(
      fc.oneof(anyText, fc.constantFrom("landing", "push", "x%", "_")),
      fc.constantFrom("_opened", "_clicked", "opened", "clicked", "_CLICKED", "_opened "),
    )
    .map(([head, tail]) => head + tail),
  anyText,
  fc.string({ unit: "grapheme", maxLength: 12 }),
);

describe("event roles", () => {
  it("the SQL expression and roleOf agree on any event type and conversion type", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.option(name, { nil: null, freq: 20 }), { minLength: 1, maxLength: 24 }),
        // The conversion type: none, one of the names (so it matches rows), or any text.
        fc.oneof(fc.constant(undefined), fc.nat(), fc.constantFrom(...TRICKY), anyText),
        async (names, pick) => {
          const conversionType =
            typeof pick === "number"
              ? (names[pick % names.length] ?? undefined)
              : (pick as string | undefined);
          const expected = // A NULL event type reads as the empty one.
            names.map((n) => roleOf(n === null ? "" : n, conversionType));
          expect(await sqlRoles(names, conversionType)).toEqual(expected);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("gives the contract's roles by the rules summarize_export counts with", async () => {
    const cases: [string, string | undefined, Role][] = [
      ["message_sent", undefined, "sent"],
      ["message_received", undefined, "received"],
      ["message_failed", undefined, "failed"],
      ["control_assigned", undefined, "control"],
      ["landing_clicked", undefined, "click"],
      ["push_opened", undefined, "open"],
      ["email_link_clicked", undefined, "open"],
      ["purchase", undefined, "conversion"],
      ["", undefined, "conversion"],
      ["purchase", "order_completed", "other"],
      ["order_completed", "order_completed", "conversion"],
      // The asked type wins over the suffix rule, but never over the send records or a click.
      ["coupon_clicked", "coupon_clicked", "conversion"],
      ["landing_clicked", "landing_clicked", "click"],
      ["message_sent", "message_sent", "sent"],
      // Suffixes are exact: no wildcards, no case folding.
      ["x%clicked", undefined, "conversion"],
      ["push_OPENED", "purchase", "other"],
    ];
    const got = [];
    for (const [n, c] of cases) got.push([n, c, (await sqlRoles([n], c))[0]]);
    expect(got).toEqual(cases);
    expect(cases.map(([n, c]) => roleOf(n, c))).toEqual(cases.map((c) => c[2]));
    expect(new Set(cases.map((c) => c[2]))).toEqual(new Set(ROLES));
  });

  it("an empty field is the empty name in both", async () => {
    expect(await sqlRoles([null], undefined)).toEqual([roleOf("", undefined)]);
    expect(await sqlRoles([null, ""], "purchase")).toEqual(["other", "other"]);
  });

  it("a conversion type given blank is none given; otherwise it is trimmed", () => {
    expect(conversionTypeOf(undefined)).toBeUndefined();
    expect(conversionTypeOf("")).toBeUndefined();
    expect(conversionTypeOf(" \t\u3000")).toBeUndefined();
    expect(conversionTypeOf(" purchase\n")).toBe("purchase");
  });
});
