import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QueryError, queryFiles } from "../../src/query/index.js";
import { campaignRows, toCsv } from "../analysis/campaign/fixture.js";
import { buildXlsx, METRICS } from "../analysis/scenario/xlsx-fixture.js";

/** The hint under DuckDB's message speaks of what the statement wrote and the tables it reads. */

const LIMITS = { memoryMb: 256, threads: 1, timeoutSeconds: 30 };
let dir: string;
let csv: string;
let xlsx: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "query-hints-"));
  csv = join(dir, "campaign.csv");
  await writeFile(csv, toCsv(campaignRows(4, 10)));
  xlsx = join(dir, "scenario.xlsx");
  const values = METRICS.map((_, m) => m + 1);
  await writeFile(
    xlsx,
    await buildXlsx([
      {
        name: "요약",
        rows: [
          ["#", "채널", "A/B 테스트 분기", "메시지 노드 ID", ...METRICS],
          [1, "앱푸시", null, "node_1", ...values],
        ],
      },
      { name: "#1 앱푸시", rows: [["node_1"], ["날짜", ...METRICS], ["2025-03-01", ...values]] },
    ]),
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The hint line of the error `sql` gets. */
async function hint(sql: string): Promise<string> {
  const error = await queryFiles({
    sql,
    files: [
      { path: csv, jobId: null },
      { path: xlsx, jobId: null },
    ],
    limits: LIMITS,
    maxRows: 10,
    spillParent: dir,
  }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, sql).toBeInstanceOf(QueryError);
  const message = (error as QueryError).message;
  expect((error as QueryError).code, message).toBe("sql_error");
  return message.slice(message.indexOf("\nHint: ") + 1);
}

const QUOTED_GROUP = 'write the column with double quotes, "group"';

describe("group written bare", () => {
  it.each([
    "SELECT group, count(*) FROM events GROUP BY 1",
    "SELECT event_type, group FROM events",
    'SELECT "group", count(*) FROM events GROUP BY group',
    "SELECT count(*) FROM events GROUP BY ALL ORDER BY group",
    "select Group from events",
  ])("%s: the hint says the column is written quoted", async (sql) => {
    expect(await hint(sql)).toContain(QUOTED_GROUP);
  });

  it.each([
    // Another mistake: group is quoted, or only in a string, a comment or GROUP BY.
    'SELECT "group", count(* FROM events GROUP BY 1',
    "SELECT 'group' AS g, FROM events WHERE",
    "SELECT count(*) FROM events -- group\nGROUP BY ALL HAVING",
    "SELECT count(*) FROM events /* group */ WHERE",
  ])("%s: no quoting hint for another parser error", async (sql) => {
    const text = await hint(sql);
    expect(text).not.toContain(QUOTED_GROUP);
    expect(text).toContain("DuckDB's dialect");
  });
});

describe("a column that is not there", () => {
  it("in a scenario_nodes query: the hint lists scenario_nodes' columns, not events'", async () => {
    const text = await hint("SELECT nodeid, sends FROM scenario_nodes");
    expect(text).toContain("scenario_nodes has job_id, file, number, channel, branch, node_id, ");
    // Korean headers are listed as they are written in SQL: quoted.
    expect(text).toContain('"발송 수(건)", sends, ');
    expect(text).not.toContain("events has");
    expect(text).not.toContain("scenario_days has");
  });

  it("in a scenario_days query, with an alias: scenario_days' columns", async () => {
    const text = await hint("SELECT d.day, sum(d.sends) FROM scenario_days AS d GROUP BY 1");
    expect(text).toContain("scenario_days has job_id, file, number, node_id, date, ");
    expect(text).not.toContain("scenario_nodes has");
    expect(text).not.toContain("events has");
  });

  it("in an events query: events' columns, event_role among them", async () => {
    const text = await hint("SELECT evnt_type FROM events");
    expect(text).toContain('events has task_id, scheduled_at, "group" (a reserved word: quote it)');
    expect(text).toContain("job_id, event_role;");
    expect(text).not.toContain("scenario_");
  });

  it("in a query over two tables: the columns of both", async () => {
    const text = await hint(
      "SELECT n.node_id, count(*) FROM events e JOIN scenario_nodes n ON e.channel = n.chanel GROUP BY 1",
    );
    expect(text).toContain("events has task_id");
    expect(text).toContain("scenario_nodes has job_id");
  });
});
