import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import { metricsCampaignSchema } from "../../src/api/schemas.js";
import { must } from "../helpers/must.js";
import { client, sandboxForFile, sandboxForTest } from "./support.js";

// Spec 2.6 and 4.4 (errors in the export endpoints' style; documented).
const sandbox = await sandboxForFile();
const api = client(sandbox);
const world = sandbox.world;

type Served = Array<{
  _id: string;
  schedule_type: string;
  tasks: Array<{ _id: string; scheduled_at: string }>;
}>;

/** Task ids with from <= scheduled_at < to, computed from the world directly. */
function expectedTasks(fromMs: number, toMs: number, type?: string): string[] {
  return world.campaigns
    .filter((c) => type === undefined || c.schedule_type === type)
    .flatMap((c) => c.tasks)
    .filter((t) => t.scheduled_at >= fromMs && t.scheduled_at < toMs)
    .map((t) => t._id)
    .sort();
}
const servedTasks = (body: Record<string, unknown>) =>
  (body.campaigns as Served).flatMap((c) => c.tasks.map((t) => t._id)).sort();
const kst = (iso: string) => DateTime.fromISO(iso, { zone: "Asia/Seoul" }).toMillis();

describe("window reading", () => {
  it("reads date-only values as whole KST days (to inclusive of its date)", async () => {
    const res = await api.metrics({ task_from: "2024-05-01", task_to: "2024-05-31" });
    expect(res.status).toBe(200);
    const expected = expectedTasks(kst("2024-05-01T00:00"), kst("2024-06-01T00:00"));
    expect(expected.length).toBeGreaterThan(0);
    expect(servedTasks(res.body)).toEqual(expected);
    for (const campaign of res.body.campaigns as unknown[]) {
      expect(metricsCampaignSchema.safeParse(campaign).success).toBe(true);
    }
  });
  it("reads offset-less date-times as KST and honours explicit offsets; to is exclusive", async () => {
    // Pick a task and cut exactly at its scheduled time.
    const task = world.campaigns
      .flatMap((c) => c.tasks)
      .find((t) => t.scheduled_at > kst("2024-05-10T00:00"));
    const at = DateTime.fromMillis(task?.scheduled_at ?? 0, { zone: "Asia/Seoul" });
    const local = at.toFormat("yyyy-MM-dd'T'HH:mm:ss");
    const utc = must(at.toUTC().toISO({ suppressMilliseconds: true }), "UTC time");
    const before = at.minus({ days: 3 }).toFormat("yyyy-MM-dd'T'HH:mm:ss");
    const endsAt = await api.metrics({ task_from: before, task_to: local });
    expect(servedTasks(endsAt.body)).not.toContain(task?._id);
    const startsAt = await api.metrics({ task_from: utc, task_to: "2024-06-14" });
    expect(servedTasks(startsAt.body)).toContain(task?._id);
    expect(servedTasks(startsAt.body)).toEqual(
      expectedTasks(at.toMillis(), kst("2024-06-15T00:00")),
    );
  });
  it("filters by campaign_schedule_type", async () => {
    for (const type of ["once", "recurring", "api_trigger"]) {
      const res = await api.metrics({
        task_from: "2024-01-01",
        task_to: "2024-06-14",
        campaign_schedule_type: type,
      });
      expect(res.status).toBe(200);
      for (const c of res.body.campaigns as Served) expect(c.schedule_type).toBe(type);
      expect(servedTasks(res.body)).toEqual(
        expectedTasks(kst("2024-01-01T00:00"), kst("2024-06-15T00:00"), type),
      );
    }
  });
});

describe("400", () => {
  it("refuses a window over 180 days with InvalidParameter, accepts exactly 180", async () => {
    const over = await api.metrics({
      task_from: "2024-01-01T00:00:00+09:00",
      task_to: "2024-06-29T00:00:01+09:00",
    });
    expect(over.status).toBe(400);
    expect(over.body.code).toBe("InvalidParameter");
    const exact = await api.metrics({
      task_from: "2024-01-01T00:00:00+09:00",
      task_to: "2024-06-29T00:00:00+09:00",
    });
    expect(exact.status).toBe(200);
    // Date-only: 2024-01-01 .. 2024-06-28 is 180 whole days.
    expect((await api.metrics({ task_from: "2024-01-01", task_to: "2024-06-28" })).status).toBe(
      200,
    );
    expect((await api.metrics({ task_from: "2024-01-01", task_to: "2024-06-29" })).status).toBe(
      400,
    );
  });
  it("refuses task_from not before task_to", async () => {
    const res = await api.metrics({
      task_from: "2024-05-02T00:00:00Z",
      task_to: "2024-05-02T00:00:00Z",
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("InvalidParameter");
  });
  it.each([
    ["no task_from", { task_to: "2024-05-02" }],
    ["no task_to", { task_from: "2024-05-02" }],
    ["a malformed date", { task_from: "yesterday", task_to: "2024-05-02" }],
    [
      "a bad schedule type",
      { task_from: "2024-05-01", task_to: "2024-05-02", campaign_schedule_type: "daily" },
    ],
  ])("answers 400 without a code for %s", async (_name, query) => {
    const res = await api.metrics(query);
    expect(res.status).toBe(400);
    expect(res.body.code).toBeUndefined();
  });
});

describe("KST even for an application in another zone (spec 4.4 names KST)", () => {
  it("reads date-only and offset-less values in KST, not in the application's zone", async () => {
    const { createWorld } = await import("../../src/sandbox/world/index.js");
    const real = createWorld({ seed: 42, now: world.now });
    const utcApp = await sandboxForTest({ world: { ...real, timeZone: "UTC" } });
    const utcApi = client(utcApp);
    // A task between 00:00 and 09:00 KST: its KST date differs from its UTC date.
    const early = real.campaigns
      .flatMap((c) => c.tasks)
      .find((t) => DateTime.fromMillis(t.scheduled_at, { zone: "Asia/Seoul" }).hour < 9);
    expect(early).toBeDefined();
    const day = DateTime.fromMillis(early?.scheduled_at ?? 0, { zone: "Asia/Seoul" }).toISODate();
    const res = await utcApi.metrics({ task_from: String(day), task_to: String(day) });
    expect(res.status).toBe(200);
    const expected = expectedTasks(kst(`${day}T00:00`), kst(`${day}T00:00`) + 86_400_000);
    expect(expected).toContain(early?._id);
    expect(servedTasks(res.body)).toEqual(expected);
    const local = await utcApi.metrics({
      task_from: `${day}T00:00:00`,
      task_to: `${day}T09:00:00`,
    });
    expect(servedTasks(local.body)).toEqual(
      expectedTasks(kst(`${day}T00:00`), kst(`${day}T09:00`)),
    );
  });
});

describe("error texts", () => {
  it("hints at %2B when an unencoded + of an offset arrived as a space", async () => {
    const app = `${sandbox.base_url}/prod/v2/applications/${sandbox.application_id}`;
    const res = await fetch(
      `${app}/campaigns/metrics?task_from=2024-06-01T00:00:00+09:00&task_to=2024-06-02`,
      { headers: { Authorization: sandbox.secret_key } },
    );
    expect(res.status).toBe(400);
    const body = (await res.json()) as { message: string };
    expect(body.message).toContain("task_from");
    expect(body.message).toContain("%2B");
    const encoded = await api.metrics({
      task_from: "2024-06-01T00:00:00+09:00",
      task_to: "2024-06-02",
    });
    expect(encoded.status).toBe(200);
  });
});
