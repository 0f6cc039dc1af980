import { describe, expect, it } from "vitest";
import { must } from "../helpers/must.js";
import { client, sandboxForFile } from "./support.js";

// Spec 5 (authentication) with the statuses of 7.1 and 7.2.
const sandbox = await sandboxForFile({ secretKey: "sbx_sk_pinned_canary_0001" });
const api = client(sandbox);
const activeSlot = sandbox.world.slots.find((s) => s.state === "active" && s.warmupMs === 0);
const campaignId = must(
  sandbox.world.campaigns.find((c) => c.role === "normal"),
  "normal campaign",
)._id;
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
  const slot = must(activeSlot, "active slot without warm-up").key;
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

describe("a key of another application (spec 5, a second data-less application)", () => {
  const other = sandbox.otherApplication;
  const otherApp = `${sandbox.base_url}/prod/v2/applications/${other?.application_id}`;
  const body = { type: "campaign_event_data", campaign_id: campaignId };
  const exportCalls = (base: string, key: string) => [
    fetch(`${base}/export-jobs`, {
      method: "POST",
      headers: { Authorization: key, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    }),
    fetch(`${base}/export-jobs/0123456789abcdef01234567`, { headers: { Authorization: key } }),
    fetch(`${base}/campaigns/metrics?task_from=2024-06-01&task_to=2024-06-10`, {
      headers: { Authorization: key },
    }),
  ];
  const recommendOn = (app: string, key: string) =>
    fetch(
      `${sandbox.realtime_base_url}/v1/applications/${app}/slots/${activeSlot?.key}/recommend`,
      {
        method: "POST",
        headers: { Authorization: key, "Content-Type": "application/json" },
        body: "{}",
      },
    );

  it("exists with its own keys, different from this application's", () => {
    expect(other?.application_id).toBe("sandbox-app-2");
    expect(other?.application_id).not.toBe(sandbox.application_id);
    const keys = [other?.secret_key, other?.recommend_secret_key];
    expect(keys).not.toContain(sandbox.secret_key);
    expect(keys).not.toContain(sandbox.recommend_secret_key);
    // Not in the contract's startup facts.
    expect(JSON.stringify(sandbox.info)).not.toContain(String(other?.secret_key));
  });

  it("rejects its export key on this application with 400 UnAuthorized", async () => {
    const base = `${sandbox.base_url}/prod/v2/applications/${sandbox.application_id}`;
    for (const res of await Promise.all(exportCalls(base, String(other?.secret_key)))) {
      expect(res.status).toBe(400);
      expect(((await res.json()) as { code: string }).code).toBe("UnAuthorized");
    }
    expect(
      (await recommendOn(sandbox.application_id, String(other?.recommend_secret_key))).status,
    ).toBe(401);
  });

  it("rejects this application's keys on its paths (400 UnAuthorized; recommend 401)", async () => {
    for (const res of await Promise.all(exportCalls(otherApp, sandbox.secret_key))) {
      expect(res.status).toBe(400);
      expect(((await res.json()) as { code: string }).code).toBe("UnAuthorized");
    }
    const app2 = String(other?.application_id);
    expect((await recommendOn(app2, sandbox.recommend_secret_key)).status).toBe(401);
  });

  it("answers its own keys: no campaigns, unknown ids, no slots", async () => {
    const key = String(other?.secret_key);
    const [create, get, metrics] = (await Promise.all(exportCalls(otherApp, key))) as [
      Response,
      Response,
      Response,
    ];
    expect(create.status).toBe(400);
    expect(((await create.json()) as { code: string }).code).toBe("ResourceNotFound");
    expect(((await get.json()) as { code: string }).code).toBe("ResourceNotFound");
    expect(metrics.status).toBe(200);
    expect(await metrics.json()).toEqual({ campaigns: [] });
    const app2 = String(other?.application_id);
    expect((await recommendOn(app2, String(other?.recommend_secret_key))).status).toBe(404);
  });

  it("does not show this application's jobs to the other application", async () => {
    const created = await api.createJob(body);
    expect(created.status).toBe(200);
    const res = await fetch(`${otherApp}/export-jobs/${String(created.body._id)}`, {
      headers: { Authorization: String(other?.secret_key) },
    });
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
