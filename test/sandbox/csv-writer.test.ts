import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import fc from "fast-check";
import { DateTime } from "luxon";
import { afterAll, describe, expect, it } from "vitest";
import { CAMPAIGN_CSV_COLUMNS } from "../../src/api/schemas.js";
import { createTimeFormatter, csvField, writeCampaignCsv } from "../../src/sandbox/csv-writer.js";
import type { CampaignRow, SandboxRound, SandboxTask } from "../../src/sandbox/world/types.js";
import { must } from "../helpers/must.js";

// The CSV writer alone (spec 2.4 format): quoting, time format, chunk boundaries, huge fields.
const dir = await mkdtemp(join(tmpdir(), "csv-writer-test-"));
afterAll(() => rm(dir, { recursive: true, force: true }));

const task: SandboxTask = {
  _id: "tsk_1",
  campaign_id: "cmp_1",
  scheduled_at: Date.parse("2024-03-31T15:00:00Z"),
  sent_at: 0,
  channel: "sms",
  rounds: [],
  aggregated: true,
  cost: { amount: 0, currency: "KRW" },
};
const round: SandboxRound = { group: "그룹A", records: 0, isControl: false };

function row(i: number, message: string): CampaignRow {
  return {
    task_id: task._id,
    scheduled_at: task.scheduled_at,
    group: "그룹A",
    event_type: "message_failed",
    user_id: `u_${i}`,
    platform_user_id: `pu_${i}`,
    captured_at: task.scheduled_at + i * 7_919_000,
    channel: "sms",
    error_code: "E42",
    error_message: message,
    event_properties: '{"a":1,"b":"x"}',
    custom_event_properties: "",
    internal_event_properties: "{}",
  };
}

describe("csvField and the time formatter", () => {
  it("round-trips any text through csv-parse", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: "grapheme" }), { minLength: 1, maxLength: 5 }),
        (fields) => {
          const line = `${fields.map(csvField).join(",")}\r\n`;
          const [parsed] = parse(line) as string[][];
          expect(parsed).toEqual(fields);
        },
      ),
    );
  });
  it("formats instants in KST like luxon does", () => {
    const format = createTimeFormatter(9 * 60);
    fc.assert(
      fc.property(
        fc.integer({ min: Date.parse("2000-01-01"), max: Date.parse("2040-01-01") }),
        (ms) => {
          const expected = DateTime.fromMillis(ms, { zone: "Asia/Seoul" }).toFormat(
            "yyyy-MM-dd HH:mm:ss",
          );
          expect(format(ms)).toBe(expected);
        },
      ),
    );
  });
});

describe("writeCampaignCsv", () => {
  it("writes every row across buffer boundaries, including a field larger than a buffer", async () => {
    const messages = ['짧은 "오류", 재시도\n두 번째 줄', "x".repeat(300), "ok"];
    const rows = Array.from({ length: 30_000 }, (_, i) => row(i, must(messages[i % 3], "message")));
    rows[1234] = row(1234, "가".repeat(500_000));
    rows[7] = row(7, "x".repeat(300_000));
    const path = join(dir, "rows.csv");
    const result = await writeCampaignCsv({ roundRows: () => rows }, [{ task, round }], path, 540);
    const bytes = await readFile(path);
    expect(result.bytes).toBe(bytes.length);
    expect(result.rows).toBe(rows.length);
    expect(bytes[0]).not.toBe(0xef);
    const parsed = parse(bytes) as string[][];
    expect(parsed[0]).toEqual([...CAMPAIGN_CSV_COLUMNS]);
    expect(parsed).toHaveLength(rows.length + 1);
    for (const i of [0, 1, 2, 7, 1234, 29_999]) {
      const source = rows[i] as CampaignRow;
      const back = parsed[i + 1] as string[];
      expect(back[9]).toBe(source.error_message);
      expect(back[10]).toBe(source.event_properties);
      expect(back[1]).toBe("2024-04-01 00:00:00");
      expect(back[6]).toBe(
        DateTime.fromMillis(source.captured_at, { zone: "Asia/Seoul" }).toFormat(
          "yyyy-MM-dd HH:mm:ss",
        ),
      );
    }
  });
  it("stops when aborted", async () => {
    const rows = Array.from({ length: 50_000 }, (_, i) => row(i, "y".repeat(100)));
    const controller = new AbortController();
    controller.abort();
    await expect(
      writeCampaignCsv(
        { roundRows: () => rows },
        [{ task, round }],
        join(dir, "aborted.csv"),
        540,
        controller.signal,
      ),
    ).rejects.toThrow();
  });
});
