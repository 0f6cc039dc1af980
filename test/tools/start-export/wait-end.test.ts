import { mkdtemp, rm } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { createApiClient } from "../../../src/api/client.js";
import { apiClientOptionsFromConfig, loadConfig } from "../../../src/config.js";
import { createServer } from "../../../src/server.js";
import {
  type FixtureServer,
  fixtureServerForFile,
  type RecordedRequest,
} from "../../helpers/fixture-server.js";
import { type ToolResult, toResult } from "../../helpers/tool-harness.js";

/**
 * The end of wait_seconds is the ordinary "not finished yet" answer, also when it falls while a
 * poll is out: the service below never answers a job read, so a poll is always in flight when
 * the wait ends.
 */

let service: FixtureServer;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const JOB = {
  _id: "exp_wait_end",
  application_id: "app_wait",
  type: "scenario_daily_metrics",
  status: "triggered",
  scenario_id: "scn_1",
  created_at: "2026-11-22T00:00:00.000Z",
  updated_at: "2026-11-22T00:00:00.000Z",
};

/** Creates answer the job; reads are held until the client gives up on them. */
function script(): void {
  service.setDefault((request: RecordedRequest, response: ServerResponse) => {
    if (request.method === "POST") {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(JOB));
      return;
    }
    return new Promise<void>((resolve) => response.on("close", () => resolve()));
  });
}

/** Our server behind the SDK client; its API client waits `headersMs` for a response's head. */
async function connect(
  headersMs: number,
  pollSeconds = "0.2",
): Promise<(name: string, args: object) => Promise<ToolResult>> {
  const dataDir = await mkdtemp(join(tmpdir(), "crm-wait-end-"));
  const config = loadConfig({
    CRM_BASE_URL: service.url,
    CRM_APPLICATION_ID: "app_wait",
    CRM_SECRET_KEY: "sk_wait_0123456789abcdef",
    CRM_DATA_DIR: dataDir,
    CRM_POLL_INTERVAL_SECONDS: pollSeconds,
    CRM_LOG_LEVEL: "error",
  });
  const api = createApiClient(
    apiClientOptionsFromConfig(config, {
      timeouts: { headersMs },
      retry: { attempts: 2, baseDelayMs: 10, maxDelayMs: 20 },
    }),
  );
  const built = createServer(config, { api });
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "test", version: "1.0.0" });
  await built.server.connect(b);
  await client.connect(a);
  cleanups.push(async () => {
    await client.close();
    await built.close();
    await api.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  return async (name, args) =>
    toResult(await client.callTool({ name, arguments: args as Record<string, unknown> }));
}

const reads = () => service.requests.filter((r) => r.method === "GET").length;

describe("a wait that ends while a poll is out", () => {
  service = fixtureServerForFile();

  it("start_export answers not finished, with the check_export call, and no error", async () => {
    script();
    const call = await connect(30_000);
    const r = await call("start_export", {
      type: "scenario_daily_metrics",
      scenario_id: "scn_1",
      from: "2026-11-01",
      to: "2026-11-01",
      wait_seconds: 1,
    });
    expect(r.isError, r.text).toBeFalsy();
    expect(reads()).toBeGreaterThan(0);
    expect(r.structured.error).toBeUndefined();
    expect(r.structured.summary).toBe(
      "Export exp_wait_end is triggered after waiting 1s; call check_export to continue.",
    );
    expect(String(r.structured.next_step)).toMatch(/^check_export \{"job_id":"exp_wait_end"/);
    expect(r.text).not.toMatch(/deadline|Error/);
  });

  it("check_export answers the same way", async () => {
    script();
    // An interval so short that it has always passed when check_export comes: the call must not
    // poll outside its wait (a read that is never answered would hold it for the 5 s below).
    const call = await connect(5_000, "0.001");
    const started = await call("start_export", {
      type: "scenario_daily_metrics",
      scenario_id: "scn_1",
      from: "2026-11-02",
      to: "2026-11-02",
      wait_seconds: 0,
    });
    expect(started.isError, started.text).toBeFalsy();
    const r = await call("check_export", { job_id: "exp_wait_end", wait_seconds: 1 });
    expect(r.isError, r.text).toBeFalsy();
    expect(reads()).toBeGreaterThan(0);
    expect(r.structured.error).toBeUndefined();
    // The same sentence as start_export's: one summary for a followed job.
    expect(r.structured.summary).toBe(
      "Export exp_wait_end is triggered after waiting 1s; call check_export to continue.",
    );
    expect(String(r.structured.next_step)).toMatch(/^check_export \{"job_id":"exp_wait_end"/);
    expect(r.text).not.toMatch(/deadline|Error/);
  });

  it("a poll that timed out on its own before the wait's end is still reported", async () => {
    script();
    // Each read gives up after 300 ms (twice, with the retry): well inside a 3 s wait.
    const call = await connect(300);
    const r = await call("start_export", {
      type: "scenario_daily_metrics",
      scenario_id: "scn_1",
      from: "2026-11-03",
      to: "2026-11-03",
      wait_seconds: 3,
    });
    expect(r.isError, r.text).toBeFalsy();
    expect(String(r.structured.error)).toContain("timed out waiting for the service");
    expect(String(r.structured.summary)).toContain("a temporary error interrupted it");
    expect(String(r.structured.next_step)).toMatch(/^check_export \{"job_id":"exp_wait_end"/);
  });
});
