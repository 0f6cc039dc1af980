import { describe, expect, it } from "vitest";
import {
  DownloadRefusedError,
  LimitExceededError,
  NetworkError,
  NotFoundError,
} from "../../src/api/errors.js";
import { mapHttpError, mapTransportError } from "../../src/api/to-api-error.js";
import { CatalogError } from "../../src/catalog.js";
import { ConfigError } from "../../src/config.js";
import { DownloadPendingError, ExportCallError } from "../../src/exports/errors.js";
import { errorText } from "../../src/mcp/error-text.js";
import { checkInteger } from "../../src/mcp/params.js";
import { ToolInputError } from "../../src/mcp/tool-errors.js";

const count = (text: string, part: string) => text.split(part).length - 1;

describe("error texts say each fact and instruction once", () => {
  it("recommend not-found names the slot problem once", () => {
    const error = mapHttpError({ operation: "recommend", status: 404, body: "", now: 0 });
    const text = errorText(error, "recommend_products");
    expect(count(text.toLowerCase(), "no active recommendation slot")).toBe(1);
    expect(count(text.toLowerCase(), "check slot_key")).toBe(1);
    expect(count(text, "CRM_APPLICATION_ID")).toBe(1);
  });

  it("a 429 on create gives one instruction and the time", () => {
    const error = mapHttpError({
      operation: "create_export_job",
      status: 429,
      body: "",
      retryAfter: "60",
      now: Date.parse("2026-11-22T00:00:00Z"),
    });
    const text = errorText(error, "start_export");
    expect(count(text, "Try again")).toBe(0);
    expect(text).toMatch(/next creation is possible at \d{4}-/);
  });

  it("a host not allowed names the setting once and the job to continue with", () => {
    const refused = new DownloadRefusedError(
      "Refused to download from https://x.example.net/f: host x.example.net is not allowed. Add it to CRM_DOWNLOAD_HOSTS if it is the service's file host.",
      { operation: "download_export", reason: "host_not_allowed" },
    );
    const text = errorText(new ExportCallError(refused, { jobId: "exp_9" }), "start_export");
    expect(count(text, "CRM_DOWNLOAD_HOSTS")).toBe(1);
    expect(text).toContain('check_export {"job_id":"exp_9"}');
  });

  it("a network break after sending the create never promises reuse", () => {
    const error = new NetworkError("Creating the export job failed: could not reach the service.", {
      operation: "create_export_job",
      requestSent: true,
    });
    const text = errorText(error, "start_export");
    expect(text).not.toMatch(/reused/);
    expect(text).toContain("creates another job");
  });

  it("LimitExceeded with a known range suggests two concrete halves", () => {
    const error = new LimitExceededError("too large", {
      operation: "create_export_job",
      status: 400,
      code: "LimitExceeded",
    });
    const text = errorText(
      new ExportCallError(error, {
        type: "campaign_event_data",
        targetId: "cmp_1",
        fromDate: "2026-10-01",
        toDate: "2026-10-31",
      }),
      "start_export",
    );
    expect(text).toContain('"from":"2026-10-01","to":"2026-10-16"');
    expect(text).toContain('"from":"2026-10-17","to":"2026-10-31"');
  });

  it("LimitExceeded on an open range proposes the last 30 days and the 30 before", () => {
    const error = new LimitExceededError("too large", {
      operation: "create_export_job",
      status: 400,
      code: "LimitExceeded",
    });
    const text = errorText(
      new ExportCallError(error, {
        type: "campaign_event_data",
        targetId: "cmp_1",
        today: "2026-11-22",
      }),
      "start_export",
    );
    // 2026-11-22 minus 29 days is 2026-10-24; the 30 days before end on 2026-10-23.
    expect(text).toContain('"campaign_id":"cmp_1","from":"2026-10-24","to":"2026-11-22"');
    expect(text).toContain('"campaign_id":"cmp_1","from":"2026-09-24","to":"2026-10-23"');
    expect(text).not.toContain("give both from and to");
    // Only a start: halves from it to today.
    const fromOnly = errorText(
      new ExportCallError(error, {
        type: "campaign_event_data",
        targetId: "cmp_1",
        fromDate: "2026-11-01",
        today: "2026-11-21",
      }),
      "start_export",
    );
    expect(fromOnly).toContain('"from":"2026-11-01","to":"2026-11-11"');
    expect(fromOnly).toContain('"from":"2026-11-12","to":"2026-11-21"');
  });

  describe("ResourceNotReady", () => {
    const notReady = (lastReadyRound?: string | null) =>
      errorText(
        new ExportCallError(
          mapHttpError({
            operation: "create_export_job",
            status: 400,
            body: '{"code":"ResourceNotReady"}',
            now: 0,
          }),
          {
            type: "campaign_event_data",
            targetId: "cmp_7",
            fromDate: "2026-11-15",
            toDate: "2026-11-21",
            today: "2026-11-22",
            ...(lastReadyRound === undefined ? {} : { lastReadyRound }),
          },
        ),
        "start_export",
      );
    const listing =
      'campaign_metrics {"campaign_ids":["cmp_7"],"include_tasks":true,"task_from":"2026-08-17","task_to":"2026-11-21"}';

    it("names the range of the same length that ends on the last round expected ready", () => {
      const text = notReady("2026-11-03");
      expect(text).toContain(
        'start_export {"type":"campaign_event_data","campaign_id":"cmp_7","from":"2026-10-28","to":"2026-11-03"}',
      );
      expect(text).toContain("was sent on 2026-11-03");
      expect(text).toContain(listing);
    });

    it("with no round expected ready: no range, the listing", () => {
      const text = notReady(null);
      expect(text).not.toContain("start_export {");
      expect(text).toContain("is expected to be aggregated yet");
      expect(text).toContain(listing);
    });

    it("when the service could not be asked: the listing only", () => {
      const text = notReady();
      expect(text).not.toContain("start_export {");
      expect(text).toContain(listing);
    });
  });

  it("not-found of a scenario export points at scenario IDs, not campaign_metrics", () => {
    const error = new NotFoundError("not found", { operation: "create_export_job", status: 400 });
    const text = errorText(
      new ExportCallError(error, { type: "scenario_daily_metrics", targetId: "scn_1" }),
      "start_export",
    );
    expect(text).toContain("scenario scn_1");
    expect(text).not.toContain("campaign_metrics");
  });

  it("authentication names the variable to check once", () => {
    const recommend = errorText(
      mapHttpError({ operation: "recommend", status: 401, body: "", now: 0 }),
      "recommend_products",
    );
    expect(count(recommend, "CRM_RECOMMEND_SECRET_KEY")).toBe(1);
    expect(count(recommend, "Check ")).toBe(1);
    const metrics = errorText(
      mapHttpError({ operation: "campaign_metrics", status: 401, body: "", now: 0 }),
      "campaign_metrics",
    );
    expect(count(metrics, "CRM_SECRET_KEY")).toBe(1);
    expect(count(metrics, "Check ")).toBe(1);
  });

  it("a TLS failure says what to check once", () => {
    const error = mapTransportError(
      Object.assign(new Error("self-signed certificate"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" }),
      { operation: "campaign_metrics", callerAborted: false, deadlineExpired: false },
    );
    const text = errorText(error, "campaign_metrics");
    expect(text).toContain("certificate is not trusted");
    expect(count(text, "NODE_EXTRA_CA_CERTS")).toBe(1);
    expect(count(text, "Check ")).toBe(1);
  });

  it("each service error kind ends in one next step", () => {
    const cases: Array<[Parameters<typeof mapHttpError>[0], RegExp]> = [
      [{ operation: "recommend", status: 412, body: "", now: 0 }, /Retry recommend_products/],
      [{ operation: "recommend", status: 502, body: "", now: 0 }, /retry shortly/],
      [{ operation: "campaign_metrics", status: 500, body: "", now: 0 }, /retry shortly/],
      [
        {
          operation: "create_export_job",
          status: 400,
          body: '{"code":"ResourceNotReady"}',
          now: 0,
        },
        /Retry after aggregation finishes/,
      ],
      [
        { operation: "create_export_job", status: 400, body: '{"code":"LimitExceeded"}', now: 0 },
        /split the period into several jobs/,
      ],
      [{ operation: "get_export_job", status: 400, body: "", now: 0 }, /Check the IDs and dates/],
    ];
    for (const [failure, next] of cases) {
      const text = errorText(mapHttpError(failure), "tool");
      expect(text, failure.operation).toMatch(next);
      expect(count(text.toLowerCase(), "try again"), text).toBe(0);
    }
  });
});

describe("error classes the tools print as they are", () => {
  it("ConfigError and CatalogError by class, not by a name any error could carry", () => {
    expect(errorText(new ConfigError("Invalid configuration: x"), "t")).toBe(
      "Error in t: Invalid configuration: x",
    );
    expect(errorText(new CatalogError("The catalog has no id column."), "t")).toBe(
      "Error in t: The catalog has no id column.",
    );
    const impostor = new Error("looks like config");
    impostor.name = "ConfigError";
    expect(errorText(impostor, "t")).toContain("unexpected failure: looks like config");
  });

  it("a download still running is printed verbatim", () => {
    const message =
      'The file of export job exp_1 is still downloading in the background (1.0 of 2.0 MB); the download continues. Wait for it with check_export {"job_id": "exp_1", "wait_seconds": 30}, then call summarize_export again.';
    expect(errorText(new DownloadPendingError("exp_1", message), "summarize_export")).toBe(
      `Error in summarize_export: ${message}`,
    );
  });

  it("checkInteger throws the input error naming the field", () => {
    expect(() => checkInteger(undefined, "limit", 1, 50)).not.toThrow();
    expect(() => checkInteger(50, "limit", 1, 50)).not.toThrow();
    for (const bad of [0, 51, 1.5]) {
      let thrown: unknown;
      try {
        checkInteger(bad, "limit", 1, 50);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ToolInputError);
      expect((thrown as ToolInputError).field).toBe("limit");
      expect((thrown as Error).message).toBe(`limit must be a whole number 1 to 50; got ${bad}.`);
    }
  });
});
