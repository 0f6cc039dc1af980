import { parse } from "csv-parse/sync";
import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import { CAMPAIGN_CSV_COLUMNS } from "../../src/api/schemas.js";
import type { SandboxCampaign, SandboxTask } from "../../src/sandbox/world/types.js";
import { must } from "../helpers/must.js";
import { client, manualClock, sandboxForFile } from "./support.js";

// Spec 2.4 (the CSV) and the date rules of 4.2, read back with csv-parse; metrics of 2.6 agree.
const clock = manualClock();
const sandbox = await sandboxForFile({ clock: clock.read });
const api = client(sandbox, clock);
const world = sandbox.world;
const TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

const kst = (ms: number) => DateTime.fromMillis(ms, { zone: "Asia/Seoul" });
const kstDate = (ms: number) => kst(ms).toFormat("yyyy-MM-dd");
const kstTime = (ms: number) => kst(ms).toFormat("yyyy-MM-dd HH:mm:ss");

async function download(job: Record<string, unknown>) {
  expect(job.status).toBe("completed");
  const res = await fetch(String(job.download_url));
  expect(res.status).toBe(200);
  const bytes = Buffer.from(await res.arrayBuffer());
  expect(bytes.length).toBe(job.file_size);
  return bytes;
}

function records(bytes: Buffer): string[][] {
  return parse(bytes, { relax_column_count: false }) as string[][];
}

/** A normal A/B campaign with a control group and a multi-task campaign to cut by dates. */
const abControl = world.campaigns.find(
  (c) =>
    c.role === "normal" && c.tasks.some((t) => t.aggregated && t.rounds.some((r) => r.isControl)),
) as SandboxCampaign;
const recurring = world.campaigns
  .filter((c) => c.role === "normal" && c.tasks.filter((t) => t.aggregated).length >= 5)
  .sort((a, b) => a.tasks.length - b.tasks.length)[0] as SandboxCampaign;

describe("format", () => {
  it("is UTF-8 without BOM, the 13 columns in order, RFC 4180 with multi-line fields", async () => {
    const bytes = await download(
      await api.exportFile({ type: "campaign_event_data", campaign_id: abControl._id }),
    );
    expect([...bytes.subarray(0, 3)]).not.toEqual([0xef, 0xbb, 0xbf]);
    expect(bytes.toString("utf8", 0, 200).split("\r\n")[0]).toBe(CAMPAIGN_CSV_COLUMNS.join(","));
    const rows = records(bytes);
    expect(rows[0]).toEqual([...CAMPAIGN_CSV_COLUMNS]);
    const data = rows.slice(1);
    for (const row of data) {
      expect(row).toHaveLength(13);
      expect(row[1]).toMatch(TIME);
      expect(row[6]).toMatch(TIME);
    }
    // The file holds exactly the rows the world has for the aggregated rounds, none dropped.
    const aggregated = abControl.tasks.filter((t) => t.aggregated);
    let expected = 0;
    for (const task of aggregated)
      for (const round of task.rounds) expected += [...world.roundRows(task, round)].length;
    expect(data).toHaveLength(expected);
    // Carrier messages with line breaks, commas and quotes survive the round trip.
    const failed = data.filter((r) => r[3] === "message_failed");
    expect(failed.length).toBeGreaterThan(0);
    for (const row of failed) expect(row[8]).not.toBe("");
    expect(failed.some((r) => r[9]?.includes("\n"))).toBe(true);
    expect(failed.some((r) => r[9]?.includes('"'))).toBe(true);
    expect(failed.some((r) => r[9]?.includes(","))).toBe(true);
  });

  it("follows row rules 1 to 4 per round", async () => {
    const bytes = await download(
      await api.exportFile({ type: "campaign_event_data", campaign_id: abControl._id }),
    );
    const data = records(bytes).slice(1);
    const tasks = abControl.tasks.filter((t) => t.aggregated);
    // Both kinds of round are read: the rules differ between them.
    expect(tasks.some((t) => t.rounds.some((r) => r.isControl && r.records > 0))).toBe(true);
    expect(tasks.some((t) => t.rounds.some((r) => !r.isControl && r.records > 0))).toBe(true);
    const sendRecordTypes = new Set([
      "message_sent",
      "message_received",
      "message_failed",
      "control_assigned",
    ]);
    for (const task of tasks) {
      expect(data.some((r) => r[0] === task._id && r[1] === kstTime(task.scheduled_at))).toBe(true);
      for (const round of task.rounds) {
        const mine = data.filter((r) => r[0] === task._id && r[2] === round.group);
        const count = (type: string) => mine.filter((r) => r[3] === type).length;
        const where = `${task._id} ${round.group}`;
        // A control round assigns its users and sends nothing; a send round sends once each.
        expect(count("control_assigned"), where).toBe(round.isControl ? round.records : 0);
        expect(count("message_sent"), where).toBe(round.isControl ? 0 : round.records);
        expect(count("message_received") + count("message_failed"), where).toBeLessThanOrEqual(
          round.isControl ? 0 : round.records,
        );
        for (const row of mine.filter((r) => r[3] === "control_assigned"))
          expect(row[7]).toBe("control");
        // Send-record rows carry a channel and `{}` properties; event rows carry no channel.
        const sendRecords = mine.filter((r) => sendRecordTypes.has(must(r[3], "event_type")));
        expect(sendRecords.length, where).toBeGreaterThanOrEqual(round.records);
        for (const row of mine) expect(row[7] !== "").toBe(sendRecords.includes(row));
        for (const row of sendRecords)
          expect([row[10], row[11], row[12]]).toEqual(["{}", "{}", "{}"]);
      }
    }
  });
});

describe("date rules of 4.2", () => {
  it("selects rounds by scheduled_at in the app zone, events may lie after `to`", async () => {
    const aggregated = recurring.tasks.filter((t) => t.aggregated);
    const first = aggregated[1] as SandboxTask;
    const last = aggregated[3] as SandboxTask;
    const from = kstDate(first.scheduled_at);
    const to = kstDate(last.scheduled_at);
    // Written as a UTC instant of the evening before: 15:00Z is 00:00 KST of `from`.
    const fromInstant = `${DateTime.fromISO(`${from}T00:00:00`, { zone: "Asia/Seoul" }).toUTC().toISO()}`;
    const job = await api.exportFile({
      type: "campaign_event_data",
      campaign_id: recurring._id,
      from: fromInstant,
      to,
    });
    expect(job.from).toBe(fromInstant);
    const data = records(await download(job)).slice(1);
    const startMs = DateTime.fromISO(from, { zone: "Asia/Seoul" }).toMillis();
    const endMs = DateTime.fromISO(to, { zone: "Asia/Seoul" }).plus({ days: 1 }).toMillis();
    const expectedTasks = recurring.tasks
      .filter((t) => t.aggregated && t.scheduled_at >= startMs && t.scheduled_at < endMs)
      .map((t) => t._id)
      .sort();
    expect(expectedTasks.length).toBeGreaterThanOrEqual(3);
    expect([...new Set(data.map((r) => r[0]))].sort()).toEqual(expectedTasks);
    // Rule 3: events are read to the conversion deadline, so some lie after the `to` date.
    const dayAfterTo = `${DateTime.fromISO(to).plus({ days: 1 }).toISODate()} 00:00:00`;
    const late = data.filter((r) => must(r[6], "captured_at") >= dayAfterTo);
    expect(late.length).toBeGreaterThan(0);
    // ... and they belong to the selected rounds, not to rounds scheduled after `to`.
    for (const row of late) expect(expectedTasks).toContain(row[0]);
  });

  it("with no dates, writes only the rounds whose aggregation is finished (rule 4)", async () => {
    const mixed = world.campaigns.find(
      (c) =>
        c.role === "normal" &&
        c.tasks.some((t) => t.aggregated) &&
        c.tasks.some((t) => !t.aggregated),
    ) as SandboxCampaign;
    expect(mixed).toBeDefined();
    const unfinished = mixed.tasks.filter((t) => !t.aggregated);
    // The unfinished rounds do have events (the metrics endpoint shows them), yet stay out.
    const window = {
      task_from: kstDate(must(unfinished[0], "unfinished round").scheduled_at),
      task_to: kstDate(world.now),
    };
    const served = ((await api.metrics(window)).body.campaigns as MetricsCampaign[]).find(
      (c) => c._id === mixed._id,
    );
    for (const task of unfinished) {
      expect(served?.tasks.find((t) => t._id === task._id)?.sent_count).toBeGreaterThan(0);
    }
    const job = await api.exportFile({ type: "campaign_event_data", campaign_id: mixed._id });
    expect("from" in job || "to" in job).toBe(false);
    const inFile = new Set(
      records(await download(job))
        .slice(1)
        .map((r) => r[0]),
    );
    const finished = mixed.tasks.filter((t) => t.aggregated).map((t) => t._id);
    expect([...inFile].sort()).toEqual([...finished].sort());
    for (const task of unfinished) expect(inFile.has(task._id)).toBe(false);
  });
});

type MetricsCampaign = { _id: string; tasks: Array<{ _id: string; sent_count: number }> };

describe("metrics agree with the export (2.6)", () => {
  it("has sent/received/open/click/purchase counts equal to the CSV's row counts per task", async () => {
    const task = abControl.tasks.find((t) => t.aggregated) as SandboxTask;
    const day = kstDate(task.scheduled_at);
    const job = await api.exportFile({
      type: "campaign_event_data",
      campaign_id: abControl._id,
      from: day,
      to: day,
    });
    const data = records(await download(job))
      .slice(1)
      .filter((r) => r[0] === task._id);
    const metrics = await api.metrics({ task_from: day, task_to: day });
    expect(metrics.status).toBe(200);
    const campaigns = metrics.body.campaigns as Array<{
      _id: string;
      tasks: Array<Record<string, unknown>>;
    }>;
    const served = campaigns
      .find((c) => c._id === abControl._id)
      ?.tasks.find((t) => t._id === task._id);
    expect(served).toBeDefined();
    const count = (pred: (r: string[]) => boolean) => data.filter(pred).length;
    const users = (pred: (r: string[]) => boolean) =>
      // The contract's user: platform_user_id, or user_id where that is empty.
      new Set(data.filter(pred).map((r) => (r[5] === "" ? `u:${r[4]}` : `p:${r[5]}`))).size;
    expect(served?.sent_count).toBe(count((r) => r[3] === "message_sent"));
    expect(served?.sent_user_count).toBe(users((r) => r[3] === "message_sent"));
    expect(served?.received_count).toBe(count((r) => r[3] === "message_received"));
    expect(served?.click_count).toBe(count((r) => r[3] === "landing_clicked"));
    expect(served?.purchase_count).toBe(count((r) => r[3] === abControl.conversion.event_type));
    const openTypes = /_opened$|_clicked$/;
    expect(served?.open_count).toBe(
      count((r) => openTypes.test(must(r[3], "event_type")) && r[3] !== "landing_clicked"),
    );
  });
});
