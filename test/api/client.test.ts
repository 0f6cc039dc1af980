import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CALL_DEADLINE_MS } from "../../src/api/client.js";
import { InvalidResponseError } from "../../src/api/errors.js";
import { PACKAGE_VERSION } from "../../src/version.js";
import { fixtureServerForFile, startFixtureServer } from "../helpers/fixture-server.js";
import { must } from "../helpers/must.js";
import {
  APP_ID,
  campaignJson,
  clientFor,
  jobJson,
  RECOMMEND_SECRET,
  SECRET,
  taskJson,
  tempDir,
} from "./support.js";

const server = fixtureServerForFile();
let dir: { path: string; cleanup: () => Promise<void> };

beforeAll(async () => {
  dir = await tempDir();
});
afterAll(async () => {
  await dir.cleanup();
});

const encodedApp = encodeURIComponent(APP_ID);

describe("request shape", () => {
  it("recommend: realtime path, whole-value recommend key, JSON body, User-Agent", async () => {
    const client = clientFor(server, dir.path);
    server.reply({ json: { item_ids: ["p2", "p1"], metadata: { algo: "x" }, extra: true } });
    const result = await client.recommend("slot/key?", { platform_user_id: "u1", limit: 2 });
    expect(result.item_ids).toEqual(["p2", "p1"]);
    expect(result.metadata).toEqual({ algo: "x" });
    const [req] = server.requests;
    expect(req?.method).toBe("POST");
    expect(req?.path).toBe(`/v1/applications/${encodedApp}/slots/slot%2Fkey%3F/recommend`);
    expect(req?.headers.authorization).toBe(RECOMMEND_SECRET);
    expect(req?.headers["content-type"]).toBe("application/json");
    expect(req?.headers["user-agent"]).toBe(`crm-insights-mcp/${PACKAGE_VERSION}`);
    expect(PACKAGE_VERSION).toMatch(/^\d+\.\d+\.\d+/);
    expect(JSON.parse(must(req, "recommend request").body)).toEqual({
      platform_user_id: "u1",
      limit: 2,
    });
    await client.close();
  });

  it("recommend tolerates a missing metadata object", async () => {
    const client = clientFor(server, dir.path);
    server.reply({ json: { item_ids: [] } });
    expect(await client.recommend("s", {})).toEqual({ item_ids: [], metadata: {} });
    await client.close();
  });

  it("uses the realtime base URL for recommend and the base URL for the rest", async () => {
    const other = await startFixtureServer();
    const client = clientFor(server, dir.path, { realtimeBaseUrl: `${other.url}/rt/` });
    other.reply({ json: { item_ids: ["a"] } });
    await client.recommend("s", {});
    expect(other.requests[0]?.path).toBe(`/rt/v1/applications/${encodedApp}/slots/s/recommend`);
    expect(server.requests).toHaveLength(0);
    await client.close();
    await other.close();
  });

  it("create and get export job: paths, secret key, body", async () => {
    const client = clientFor(server, dir.path);
    server.reply({ json: jobJson() }, { json: jobJson({ status: "processing" }) });
    const body = {
      type: "campaign_event_data" as const,
      campaign_id: "cmp-1",
      from: "2026-11-01T00:00:00.000+09:00",
    };
    const created = await client.createExportJob(body);
    expect(created._id).toBe("job-1");
    const read = await client.getExportJob("job/1");
    expect(read.status).toBe("processing");
    const [create, get] = server.requests;
    expect(create?.method).toBe("POST");
    expect(create?.path).toBe(`/prod/v2/applications/${encodedApp}/export-jobs`);
    expect(create?.headers.authorization).toBe(SECRET);
    expect(JSON.parse(must(create, "create request").body)).toEqual(body);
    expect(get?.method).toBe("GET");
    expect(get?.path).toBe(`/prod/v2/applications/${encodedApp}/export-jobs/job%2F1`);
    expect(get?.headers.authorization).toBe(SECRET);
    expect(get?.headers["content-type"]).toBeUndefined();
    await client.close();
  });

  it("campaign metrics: query parameters and parsed campaigns", async () => {
    const client = clientFor(server, dir.path);
    server.reply({ json: { campaigns: [campaignJson([taskJson()])] } });
    const result = await client.campaignMetrics({
      task_from: "2026-11-01T00:00:00+09:00",
      task_to: "2026-11-02T00:00:00+09:00",
      campaign_schedule_type: "once",
    });
    expect(result.campaigns[0]?.tasks[0]?.sent_count).toBe(10);
    const req = server.requests[0];
    expect(req?.path).toBe(`/prod/v2/applications/${encodedApp}/campaigns/metrics`);
    expect(req?.query.get("task_from")).toBe("2026-11-01T00:00:00+09:00");
    expect(req?.query.get("task_to")).toBe("2026-11-02T00:00:00+09:00");
    expect(req?.query.get("campaign_schedule_type")).toBe("once");
    expect(req?.url).toContain("task_from=2026-11-01T00%3A00%3A00%2B09%3A00");
    await client.close();
  });
});

describe("response validation", () => {
  it("names the field path of a wrong type", async () => {
    const client = clientFor(server, dir.path);
    const tasks = [taskJson(), taskJson(), taskJson(), taskJson({ sent_count: "12" })];
    server.reply({ json: { campaigns: [campaignJson(tasks)] } });
    const error = await client
      .campaignMetrics({ task_from: "2026-11-01", task_to: "2026-11-02" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect((error as Error).message).toContain("campaigns.0.tasks.3.sent_count: expected number");
    await client.close();
  });

  it("names a missing required field and a completed job without its file fields", async () => {
    const client = clientFor(server, dir.path);
    const { _id: _, ...withoutId } = jobJson();
    server.reply({ json: withoutId }, { json: jobJson({ status: "completed" }) });
    const missing = await client.getExportJob("job-1").catch((e: unknown) => e);
    expect((missing as Error).message).toContain("_id: expected string, missing");
    const incomplete = await client.getExportJob("job-1").catch((e: unknown) => e);
    expect(incomplete).toBeInstanceOf(InvalidResponseError);
    expect((incomplete as Error).message).toContain("file_name");
    await client.close();
  });

  it("rejects a body that is not JSON, keeping it only in detail", async () => {
    const client = clientFor(server, dir.path);
    server.reply({ body: "<html>gateway</html>" });
    const error = (await client.getExportJob("j").catch((e: unknown) => e)) as InvalidResponseError;
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect(error.message).not.toContain("gateway");
    expect(error.detail).toBe("<html>gateway</html>");
    await client.close();
  });
});

describe("a create whose answer does not validate", () => {
  it("names the job it probably created and points at check_export", async () => {
    const client = clientFor(server, dir.path);
    server.reply({ json: { _id: "job-77", status: "queued-ish" } });
    const error = await client
      .createExportJob({ type: "campaign_event_data", campaign_id: "c" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect((error as Error).message).toContain("probably created (id job-77)");
    expect((error as Error).message).toContain("check_export");
    expect(server.requests).toHaveLength(1);
    // A read that fails validation says nothing of the kind.
    server.reply({ json: { _id: "job-77" } });
    const read = await client.getExportJob("job-77").catch((e: unknown) => e);
    expect((read as Error).message).not.toContain("probably created");
    await client.close();
  });
});

describe("default deadline", () => {
  it("is 45 seconds, well inside a typical 60-second MCP request timeout", () => {
    expect(DEFAULT_CALL_DEADLINE_MS).toBe(45_000);
  });

  it("bounds a call that gives none, retries and waits included", async () => {
    const client = clientFor(server, dir.path, { defaultDeadlineMs: 400 });
    server.setDefault({ delayMs: 1_500, json: { item_ids: [] } });
    const started = Date.now();
    const error = await client.recommend("s", {}).catch((e: unknown) => e);
    server.setDefault({ status: 500, json: { error: "no scripted reply" } });
    expect((error as { kind?: string }).kind).toBe("timeout");
    expect((error as Error).message).toContain("deadline");
    expect(Date.now() - started).toBeLessThan(1_200);
    expect(server.requests).toHaveLength(1);
    await client.close();
  });

  it("a deadline the caller gives still wins", async () => {
    const client = clientFor(server, dir.path, { defaultDeadlineMs: 100 });
    server.reply({ delayMs: 300, json: jobJson() });
    await expect(
      client.getExportJob("job-1", { deadline: Date.now() + 3_000 }),
    ).resolves.toMatchObject({ _id: "job-1" });
    await client.close();
  });
});
