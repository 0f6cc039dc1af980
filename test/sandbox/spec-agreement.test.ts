import { describe, expect, it } from "vitest";
import * as client from "../../src/api/limits.js";
import * as clientSchemas from "../../src/api/schemas.js";
import * as double from "../../src/sandbox/spec.js";

/**
 * The client (src/api/) and the sandbox (src/sandbox/spec.ts) each read the spec on their own.
 * Where they read it differently, this says which name disagrees before any end-to-end test
 * fails on its consequence.
 */
describe("the client and the sandbox read the spec alike", () => {
  it.each([
    ["export types", clientSchemas.EXPORT_TYPES, double.EXPORT_TYPES],
    ["schedule types", clientSchemas.SCHEDULE_TYPES, double.SCHEDULE_TYPES],
    ["campaign CSV columns", clientSchemas.CAMPAIGN_CSV_COLUMNS, double.CSV_COLUMNS],
    [
      "scenario lead columns",
      clientSchemas.SCENARIO_SUMMARY_LEAD_COLUMNS,
      double.SUMMARY_LEAD_COLUMNS,
    ],
    ["scenario metric columns", clientSchemas.SCENARIO_METRIC_COLUMNS, double.METRIC_COLUMNS],
  ])("%s", (_name, ours, theirs) => {
    expect([...ours]).toEqual([...theirs]);
  });

  it("limits", () => {
    expect({
      create: [client.EXPORT_CREATE_LIMIT, client.EXPORT_CREATE_WINDOW_SECONDS],
      size: [client.EXPORT_MAX_SENDS, client.EXPORT_MAX_ROUNDS],
      url: client.DOWNLOAD_URL_VALIDITY_HOURS,
      metrics: client.MAX_METRICS_WINDOW_DAYS,
      recommend: [client.RECOMMEND_LIMIT_MIN, client.RECOMMEND_LIMIT_MAX],
    }).toEqual({
      create: [double.CREATE_LIMIT, double.CREATE_WINDOW_SECONDS],
      size: [double.MAX_SENDS_PER_EXPORT, double.MAX_ROUNDS_PER_EXPORT],
      url: double.DOWNLOAD_URL_HOURS,
      metrics: double.METRICS_WINDOW_DAYS,
      recommend: [double.RECOMMEND_LIMIT.min, double.RECOMMEND_LIMIT.max],
    });
  });

  it("a metrics response of the sandbox passes the client's schema", async () => {
    const { createWorld } = await import("../../src/sandbox/world/index.js");
    const world = createWorld({ seed: 7, now: Date.UTC(2025, 2, 1) });
    const response = world.campaignMetrics(0, world.now + 1);
    expect(response.campaigns.length).toBeGreaterThan(0);
    expect(clientSchemas.metricsResponseSchema.safeParse(response).success).toBe(true);
  });
});
