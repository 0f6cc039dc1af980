import { describe, expect, it } from "vitest";
import { client, sandboxForFile } from "./support.js";

// Spec 5 (authentication) with the statuses of 7.1 and 7.2.
const sandbox = await sandboxForFile({ secretKey: "sbx_sk_pinned_canary_0001" });
const api = client(sandbox);
const activeSlot = sandbox.world.slots.find((s) => s.state === "active" && s.warmupMs === 0);
const campaignId = sandbox.world.campaigns.find((c) => c.role === "normal")?._id ?? "";
const METRICS = { task_from: "2024-06-01", task_to: "2024-06-10" };

describe("keys", () => {
  it("issues two different sbx_ keys and honours a pinned one", () => {
    expect(sandbox.secret_key).toBe("sbx_sk_pinned_canary_0001");
    expect(sandbox.recommend_secret_key).toMatch(/^sbx_/);
    expect(sandbox.recommend_secret_key).not.toBe(sandbox.secret_key);
    expect(sandbox.info.secret_key).toBe(sandbox.secret_key);
  });
});

describe("recommend (401 on a bad key)", () => {
  const slot = activeSlot?.key ?? "";
  it("accepts the recommend key as the whole header value", async () => {
    expect((await api.recommend(slot, {})).status).toBe(200);
  });
  it.each([
    ["missing", null],
    ["wrong", "sbx_live_0000000000"],
    ["the export key (another application's key)", "sbx_sk_pinned_canary_0001"],
    ["a Bearer prefix", `Bearer ${"x"}`],
  ])("rejects %s", async (_name, key) => {
    const res = await api.recommend(slot, {}, key);
    expect(res.status).toBe(401);
  });
  it("rejects the right key behind a Bearer prefix", async () => {
    const res = await api.recommend(slot, {}, `Bearer ${sandbox.recommend_secret_key}`);
    expect(res.status).toBe(401);
  });
  it("answers 404 for an unknown application once authenticated", async () => {
    const url = `${sandbox.realtime_base_url}/v1/applications/no-such-app/slots/${slot}/recommend`;
    const res = await fetch(url, {
      method: "POST",
      headers: { Authorization: sandbox.recommend_secret_key, "Content-Type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(404);
  });
});

describe("export and metrics (400 UnAuthorized on a bad key)", () => {
  const body = { type: "campaign_event_data", campaign_id: campaignId };
  it.each([
    ["missing", null],
    ["wrong", "sbx_sk_not_ours"],
    ["the recommend key", "RECOMMEND"],
    ["a Bearer prefix", "BEARER"],
  ])("rejects %s on create, get and metrics", async (_name, raw) => {
    const key =
      raw === "RECOMMEND"
        ? sandbox.recommend_secret_key
        : raw === "BEARER"
          ? `Bearer ${sandbox.secret_key}`
          : raw;
    for (const res of [
      await api.createJob(body, key),
      await api.getJob("0123456789abcdef01234567", key),
      await api.metrics(METRICS, key),
    ]) {
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("UnAuthorized");
      expect(JSON.stringify(res.body)).not.toContain(sandbox.secret_key);
    }
  });
  it("accepts the secret key", async () => {
    expect((await api.metrics(METRICS)).status).toBe(200);
  });
  it("answers ResourceNotFound for an unknown application", async () => {
    const url = `${sandbox.base_url}/prod/v2/applications/no-such-app/campaigns/metrics?task_from=2024-06-01&task_to=2024-06-02`;
    const res = await fetch(url, { headers: { Authorization: sandbox.secret_key } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe("ResourceNotFound");
  });
});

describe("routes (spec 4)", () => {
  it("answers 405 with Allow for a known path under another method", async () => {
    const res = await fetch(
      `${sandbox.base_url}/prod/v2/applications/${sandbox.application_id}/export-jobs`,
      { headers: { Authorization: sandbox.secret_key } },
    );
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });
  it("answers 404 for paths outside the API", async () => {
    for (const path of [
      "/",
      "/v2/applications/x/export-jobs",
      "/prod/v1/applications/x/campaigns/metrics",
    ]) {
      expect((await fetch(`${sandbox.base_url}${path}`)).status).toBe(404);
    }
  });
});
