import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import { createSandboxClock } from "../../src/sandbox/clock.js";
import { createUrlSigner } from "../../src/sandbox/download-urls.js";
import { createExportJobs } from "../../src/sandbox/export-jobs.js";
import { formatKstDate } from "../../src/sandbox/world/time.js";
import type { World } from "../../src/sandbox/world/types.js";
import { must } from "../helpers/must.js";
import { client, manualClock, sandboxForFile, sandboxForTest } from "./support.js";

// Spec 2.3, 3.1, 4.2, 4.3, 7.2 and the create-rate and size limits of 8.
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;
const clock = manualClock();
const sandbox = await sandboxForFile({ clock: clock.read, jobSeconds: 10 });
const api = client(sandbox, clock);
const world = sandbox.world;
const byRole = (role: string) =>
  must(
    world.campaigns.find((c) => c.role === role),
    `campaign of role ${role}`,
  );
const normal = must(
  world.campaigns.find(
    (c) => c.role === "normal" && c.tasks.some((t) => t.aggregated) && c.tasks.length >= 3,
  ),
  "normal campaign with three rounds, one aggregated",
);
const scenarioId = must(sandbox.scenario_ids[0], "scenario");

/** One create per simulated minute keeps the suite under the 10-per-10-minutes limit. */
async function create(body: unknown) {
  const res = await api.createJob(body);
  clock.advance(61_000);
  return res;
}

describe("create and get (lifecycle paced by jobSeconds)", () => {
  it("goes triggered -> processing -> completed with the file fields only when completed", async () => {
    const created = await create({ type: "campaign_event_data", campaign_id: normal._id });
    expect(created.status).toBe(200);
    const job = created.body;
    expect(job.status).toBe("triggered");
    expect(job.type).toBe("campaign_event_data");
    expect(job.application_id).toBe(sandbox.application_id);
    expect(job.campaign_id).toBe(normal._id);
    // Omitted from and to stay omitted for campaign jobs.
    expect("from" in job).toBe(false);
    expect("to" in job).toBe(false);
    expect(job.created_at).toMatch(ISO_UTC);
    expect(job.updated_at).toMatch(ISO_UTC);
    expect(job.download_url).toBeUndefined();

    // create() advanced the clock 61 s past creation; start a fresh job to observe the phases.
    const second = await api.createJob({ type: "campaign_event_data", campaign_id: normal._id });
    const id = String(second.body._id);
    clock.advance(2_000);
    expect((await api.getJob(id)).body.status).toBe("triggered");
    clock.advance(4_000);
    const processing = (await api.getJob(id)).body;
    expect(processing.status).toBe("processing");
    expect(processing.file_name).toBeUndefined();
    clock.advance(5_000);
    const done = (await api.getJob(id)).body;
    expect(done.status).toBe("completed");
    expect(done.file_ext).toBe("csv");
    expect(typeof done.file_name).toBe("string");
    expect(String(done.file_name)).not.toContain(".");
    expect(done.file_size).toBeGreaterThan(0);
    expect(done.download_url_expires_at).toMatch(ISO_UTC);
    expect(Date.parse(String(done.updated_at))).toBeGreaterThan(
      Date.parse(String(done.created_at)),
    );
    clock.advance(61_000);
  });

  it("ends failed for the failing_export campaign", async () => {
    const failing = byRole("failing_export");
    const created = await create({ type: "campaign_event_data", campaign_id: failing._id });
    expect(created.status).toBe(200);
    const job = (await api.getJob(String(created.body._id))).body;
    expect(job.status).toBe("failed");
    expect(job.download_url).toBeUndefined();
  });

  it("returns from and to as ISO 8601 UTC instants, and makes a scenario job an xlsx", async () => {
    const created = await create({
      type: "scenario_daily_metrics",
      scenario_id: scenarioId,
      from: "2024-06-01",
      to: "2024-06-07T10:00:00+09:00",
    });
    expect(created.status).toBe(200);
    // Spec 2.3: every date-time field is ISO 8601 in UTC. A date-only value is 00:00 KST.
    expect(created.body.from).toMatch(ISO_UTC);
    expect(created.body.to).toMatch(ISO_UTC);
    expect(Date.parse(String(created.body.from))).toBe(Date.UTC(2024, 4, 31, 15));
    expect(Date.parse(String(created.body.to))).toBe(Date.UTC(2024, 5, 7, 1));
    const inSeoul = (iso: unknown) =>
      DateTime.fromISO(String(iso), { zone: "utc" }).setZone("Asia/Seoul");
    expect(inSeoul(created.body.from).toISODate()).toBe("2024-06-01");
    expect(inSeoul(created.body.from).toFormat("HH:mm:ss")).toBe("00:00:00");
    expect(inSeoul(created.body.to).toFormat("yyyy-MM-dd HH:mm")).toBe("2024-06-07 10:00");
    expect(created.body.scenario_id).toBe(scenarioId);
    const job = (await api.getJob(String(created.body._id))).body;
    expect(job.from).toBe(created.body.from);
    expect(job.to).toBe(created.body.to);
    expect(job.status).toBe("completed");
    expect(job.file_ext).toBe("xlsx");
  });

  it("returns an offset-less date-time read in KST as UTC, and a Z instant unchanged", async () => {
    const campaign = normal;
    const created = await create({
      type: "campaign_event_data",
      campaign_id: campaign._id,
      from: "2024-01-10T09:30:00",
      to: "2024-06-14T23:00:00Z",
    });
    expect(created.status).toBe(200);
    expect(created.body.from).toBe("2024-01-10T00:30:00.000Z");
    expect(created.body.to).toBe("2024-06-14T23:00:00.000Z");
  });
});

describe("400 errors of 7.2", () => {
  it.each([
    ["no type", { campaign_id: "x" }],
    ["an unknown type", { type: "inapp_event_data", campaign_id: "x" }],
    ["no campaign_id", { type: "campaign_event_data" }],
    ["a numeric campaign_id", { type: "campaign_event_data", campaign_id: 5 }],
    ["a malformed date", { type: "campaign_event_data", campaign_id: "x", from: "June 1" }],
    ["an impossible date", { type: "campaign_event_data", campaign_id: "x", from: "2024-02-30" }],
    [
      "from after to",
      { type: "campaign_event_data", campaign_id: "x", from: "2024-06-02", to: "2024-06-01" },
    ],
    [
      "a scenario without from",
      { type: "scenario_daily_metrics", scenario_id: "x", to: "2024-06-01" },
    ],
    [
      "a scenario without to",
      { type: "scenario_daily_metrics", scenario_id: "x", from: "2024-06-01" },
    ],
  ])("answers 400 without a code for %s", async (_name, body) => {
    const res = await api.createJob(body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBeUndefined();
    expect(typeof res.body.message).toBe("string");
  });
  it("answers 400 for a body that is not a JSON object", async () => {
    expect((await api.createJob("not json")).status).toBe(400);
  });
  it("answers ResourceNotFound for an unknown campaign, scenario and job", async () => {
    const results = [
      await api.createJob({ type: "campaign_event_data", campaign_id: "cmp_nope" }),
      await api.createJob({
        type: "scenario_daily_metrics",
        scenario_id: "scn_nope",
        from: "2024-06-01",
        to: "2024-06-02",
      }),
      await api.getJob("ffffffffffffffffffffffff"),
    ];
    for (const res of results) {
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("ResourceNotFound");
    }
  });
  it("answers ResourceNotReady when no round in range has finished aggregating", async () => {
    const notReady = byRole("not_ready");
    expect(notReady.tasks.every((t) => !t.aggregated)).toBe(true);
    const res = await api.createJob({ type: "campaign_event_data", campaign_id: notReady._id });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("ResourceNotReady");
  });
  it("answers LimitExceeded over 2,000,000 sends and over 120 rounds", async () => {
    for (const role of ["huge_sends", "many_rounds"]) {
      const campaign = byRole(role);
      const aggregated = campaign.tasks.filter((t) => t.aggregated);
      const sendRounds = aggregated.flatMap((t) => t.rounds.filter((r) => !r.isControl));
      const sends = sendRounds.reduce((sum, r) => sum + r.records, 0);
      expect(sends > 2_000_000 || sendRounds.length > 120).toBe(true);
      const res = await api.createJob({ type: "campaign_event_data", campaign_id: campaign._id });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("LimitExceeded");
    }
  });
  it("accepts a narrowed range of the huge campaign (no rows generated at create)", async () => {
    const huge = byRole("huge_sends");
    const task = must(
      huge.tasks.find((t) => t.aggregated),
      "aggregated round of the huge campaign",
    );
    const day = formatKstDate(task.scheduled_at);
    // The create handler itself, on a world that counts the rows it hands out: the reply must
    // be built from round metadata only, leaving the rows to the background writer.
    let rowsRead = 0;
    const counting: World = {
      ...world,
      *roundRows(t, r) {
        for (const row of world.roundRows(t, r)) {
          rowsRead += 1;
          yield row;
        }
      },
    };
    const fileDir = await mkdtemp(join(tmpdir(), "export-jobs-"));
    const jobs = createExportJobs({
      world: counting,
      clock: createSandboxClock(clock.read(), clock.read),
      jobSeconds: 10,
      fileDir,
      signer: createUrlSigner(() => "http://127.0.0.1:1"),
      offsetMinutes: 9 * 60,
    });
    try {
      const reply = await jobs.create({
        type: "campaign_event_data",
        campaign_id: huge._id,
        from: day,
        to: day,
      });
      expect(rowsRead).toBe(0);
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({ status: "triggered" });
      expect(reply.body).not.toHaveProperty("file_size");
      const id = (reply.body as { _id?: unknown })._id;
      expect(typeof id).toBe("string");
      expect(await jobs.file(String(id))).toBeUndefined();
    } finally {
      await jobs.close();
      await rm(fileDir, { recursive: true, force: true });
    }
  });
});

describe("429 after 10 creations in 10 minutes", () => {
  it("refuses the 11th with Retry-After and accepts again once the window slides", async () => {
    const own = manualClock();
    const fresh = await sandboxForTest({ clock: own.read, jobSeconds: 0 });
    const freshApi = client(fresh);
    const body = { type: "campaign_event_data", campaign_id: normal._id };
    for (let i = 0; i < 10; i += 1) {
      expect((await freshApi.createJob(body)).status).toBe(200);
      own.advance(10_000);
    }
    const refused = await freshApi.createJob(body);
    expect(refused.status).toBe(429);
    // The first creation leaves the window 600 s after it was made; 100 s have passed.
    expect(Number(refused.headers.get("retry-after"))).toBe(500);
    own.advance(499_000);
    expect((await freshApi.createJob(body)).status).toBe(429);
    own.advance(1_000);
    expect((await freshApi.createJob(body)).status).toBe(200);
  });
});
