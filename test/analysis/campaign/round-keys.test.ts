import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summarizeCampaignCsv } from "../../../src/analysis/campaign/summary.js";
import { HEADER } from "./fixture.js";

/**
 * A row's send round is found from its raw bytes (campaign/round-hash-table.ts): by the three key fields as one
 * span when none is quoted, field by field when some are, through a small cache whose slots many
 * rounds share. Whatever the spelling (quoted or not) and whatever the names (commas and quotes
 * in them, names that are the start of others), each row counts in its own round.
 */

let dir: string;
let n = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "round-keys-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const name = fc
  .array(fc.constantFrom("a", "b", ",", '"', "그", "1"), { maxLength: 5 })
  .map((chars) => chars.join(""));
const TIMES = ["2025-03-01 10:00:00", "2025-03-01 10:00:01", "2025-03-08 10:00:00"];

/** A field as a CSV writer may put it: quoted when it must be, and sometimes when not. */
function field(value: string, quote: boolean): string {
  return quote || /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

describe("send rounds found from the rows' bytes", () => {
  it("count each row in its round, however the key fields are spelled", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(name, fc.constantFrom(...TIMES), name), {
          minLength: 1,
          maxLength: 120,
        }),
        fc.array(fc.tuple(fc.nat(), fc.boolean(), fc.boolean(), fc.boolean()), {
          minLength: 1,
          maxLength: 600,
        }),
        async (rounds, picks) => {
          const expected = new Map<string, number>();
          const lines = [HEADER.join(",")];
          for (const [pick, q0, q1, q2] of picks) {
            const [task, scheduled, group] = rounds[pick % rounds.length] as [
              string,
              string,
              string,
            ];
            const key = JSON.stringify([task, scheduled, group]);
            expected.set(key, (expected.get(key) ?? 0) + 1);
            lines.push(
              [
                field(task, q0),
                field(scheduled, q1),
                field(group, q2),
                "message_sent",
                "",
                "u1",
                scheduled,
                "sms",
                "",
                "",
                "{}",
                "{}",
                "{}",
              ].join(","),
            );
          }
          n++;
          const path = join(dir, `r${n}.csv`);
          await writeFile(path, `${lines.join("\n")}\n`);
          const result = await summarizeCampaignCsv(path, (await stat(path)).size, {
            threads: 1,
          });
          const got = new Map(
            result.rounds.map((r) => [
              JSON.stringify([r.task_id, r.scheduled_at, r.group]),
              r.sent,
            ]),
          );
          expect(got).toEqual(expected);
        },
      ),
      { numRuns: 60 },
    );
  }, 60_000);
});
