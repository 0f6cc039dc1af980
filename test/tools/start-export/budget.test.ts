import { mkdtemp, rm } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { createApiClient } from "../../../src/api/client.js";
import { apiClientOptionsFromConfig, loadConfig } from "../../../src/config.js";
import type { ToolRuntime } from "../../../src/mcp/tool.js";
import { startSandbox } from "../../../src/sandbox/index.js";
import { createServer } from "../../../src/server.js";
import { fixtureServerForFile, freePort } from "../../helpers/fixture-server.js";
import { must } from "../../helpers/must.js";
import { SANDBOX_NOW, type ToolResult, toResult } from "../../helpers/tool-harness.js";

/**
 * The local export budget counts what the service counts: a creation the service refused with a
 * definitive answer gives its slot back; one whose fate is unknown keeps it.
 */

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Connected {
  call(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  runtime: ToolRuntime;
}

/**
 * Our server behind the SDK client, on a data folder of its own (removed after the test). With
 * CRM_BASE_URL its API client waits `headersMs` for an answer and retries quickly.
 */
async function connect(
  env: Record<string, string>,
  options: { now?: () => number; headersMs?: number } = {},
): Promise<Connected> {
  const dataDir = await mkdtemp(join(tmpdir(), "crm-export-budget-"));
  const config = loadConfig({ CRM_DATA_DIR: dataDir, CRM_LOG_LEVEL: "error", ...env });
  const api =
    env.CRM_BASE_URL === undefined
      ? undefined
      : createApiClient(
          apiClientOptionsFromConfig(config, {
            timeouts: { headersMs: options.headersMs ?? 30_000 },
            retry: { attempts: 3, baseDelayMs: 10, maxDelayMs: 50 },
            ...(options.now === undefined ? {} : { now: options.now }),
          }),
        );
  const built = createServer(config, {
    ...(api === undefined ? {} : { api }),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "test", version: "1.0.0" });
  await built.server.connect(b);
  await client.connect(a);
  cleanups.push(async () => {
    await client.close();
    await built.close();
    await api?.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  return {
    call: async (name, args) => toResult(await client.callTool({ name, arguments: args })),
    runtime: built.runtime,
  };
}

describe("on the embedded sandbox (sandbox mode)", () => {
  it("with a budget of 2, three creations for an unknown campaign and then two valid ones make two jobs", async () => {
    // The embedded sandbox builds the same world from the same date; read valid IDs from it.
    const probe = await startSandbox({ now: SANDBOX_NOW, jobSeconds: 0 });
    const scenarioId = must(probe.world.scenarios[0]?._id, "scenario");
    await probe.close();
    const server = await connect({
      CRM_SANDBOX_NOW: SANDBOX_NOW,
      CRM_SANDBOX_JOB_SECONDS: "0.3",
      CRM_EXPORT_BUDGET: "2/600",
    });
    for (let i = 0; i < 3; i++) {
      const refused = await server.call("start_export", {
        type: "campaign_event_data",
        campaign_id: "cmp_not_in_this_application",
      });
      expect(refused.isError).toBe(true);
      expect(refused.text).toContain("campaign cmp_not_in_this_application was not found");
      expect(refused.text).not.toMatch(/budget/i);
    }
    const made: string[] = [];
    for (const day of ["2026-11-01", "2026-11-02"]) {
      const ok = await server.call("start_export", {
        type: "scenario_daily_metrics",
        scenario_id: scenarioId,
        from: day,
        to: day,
        wait_seconds: 0,
      });
      expect(ok.isError, ok.text).toBeFalsy();
      expect(ok.structured.reused).toBe(false);
      made.push((ok.structured.job as { _id: string })._id);
    }
    expect(new Set(made).size).toBe(2);
    expect(await server.runtime.ledger.count()).toBe(2);
    const listed = await server.call("check_export", {});
    expect((listed.structured.budget as { used: number }).used).toBe(2);
    // The budget still holds: the accepted two used it up.
    const third = await server.call("start_export", {
      type: "scenario_daily_metrics",
      scenario_id: scenarioId,
      from: "2026-11-03",
      to: "2026-11-03",
      wait_seconds: 0,
    });
    expect(third.isError).toBe(true);
    expect(third.text).toContain("Local export budget used up: 2 of 2");
    expect(third.text).toContain("only creations it accepted, or whose answer was lost, count");
  });
});

describe("against a scripted service on loopback", () => {
  const service = fixtureServerForFile();
  const env = () => ({
    CRM_BASE_URL: service.url,
    CRM_APPLICATION_ID: "app_budget",
    CRM_SECRET_KEY: "sk_budget_0123456789abcdef",
    CRM_POLL_INTERVAL_SECONDS: "0.2",
  });
  const args = (day: string) => ({
    type: "scenario_daily_metrics",
    scenario_id: "scn_1",
    from: day,
    to: day,
    wait_seconds: 0,
  });
  const creates = () => service.requests.filter((r) => r.method === "POST").length;
  const triggered = (id: string) => ({
    json: {
      _id: id,
      application_id: "app_budget",
      type: "scenario_daily_metrics",
      status: "triggered",
      scenario_id: "scn_1",
      created_at: "2026-11-22T00:00:00.000Z",
      updated_at: "2026-11-22T00:00:00.000Z",
    },
  });
  /** Never answers; the request ends when the client gives up on it. */
  const hang = (_request: unknown, response: ServerResponse) =>
    new Promise<void>((resolve) => response.on("close", () => resolve()));

  it("every definitive refusal gives its slot back: 400 of each code or none, 401, 403, 404", async () => {
    const server = await connect({ ...env(), CRM_EXPORT_BUDGET: "1/600" });
    const refusals = [
      { status: 400, json: { code: "ResourceNotFound", message: "Scenario scn_1 not found" } },
      { status: 400, json: { code: "ResourceNotReady", message: "not aggregated" } },
      { status: 400, json: { code: "LimitExceeded", message: "too many sends" } },
      { status: 400, json: { code: "UnAuthorized", message: "bad key" } },
      { status: 400, json: { message: "from is malformed" } },
      { status: 401, json: { message: "unauthorized" } },
      { status: 403, json: { message: "forbidden" } },
      { status: 404, json: { message: "no such route" } },
    ];
    for (const [i, refusal] of refusals.entries()) {
      service.reply(refusal);
      const r = await server.call(
        "start_export",
        args(`2026-10-${String(i + 1).padStart(2, "0")}`),
      );
      expect(r.isError).toBe(true);
      expect(r.text).not.toMatch(/budget used up/);
      // Each reached the service: with a budget of 1, a kept slot would have stopped the next.
      expect(creates()).toBe(i + 1);
      expect((await server.runtime.ledger.budgetStatus()).used).toBe(0);
    }
    service.reply(triggered("exp_after_refusals"));
    const ok = await server.call("start_export", args("2026-10-20"));
    expect(ok.isError, ok.text).toBeFalsy();
    expect((await server.runtime.ledger.budgetStatus()).used).toBe(1);
  });

  it("a 429 gives its slot back, and no creation is sent before its Retry-After", async () => {
    let now = Date.parse(SANDBOX_NOW);
    const server = await connect({ ...env(), CRM_EXPORT_BUDGET: "1/600" }, { now: () => now });
    service.reply({ status: 429, headers: { "retry-after": "120" }, json: { message: "slow" } });
    const limited = await server.call("start_export", args("2026-10-01"));
    expect(limited.isError).toBe(true);
    expect(limited.text).toContain("HTTP 429");
    expect((await server.runtime.ledger.budgetStatus()).used).toBe(0);
    const early = await server.call("start_export", args("2026-10-02"));
    expect(early.isError).toBe(true);
    expect(early.text).toContain("The service refused more export jobs for now (429)");
    expect(early.text).toContain(`at ${new Date(now + 120_000).toISOString()}`);
    expect(creates()).toBe(1);
    now += 120_001;
    service.reply(triggered("exp_after_429"));
    const ok = await server.call("start_export", args("2026-10-03"));
    expect(ok.isError, ok.text).toBeFalsy();
    expect(creates()).toBe(2);
  });

  it("a timeout, a connection cut after sending and a 500 keep their slots", async () => {
    const server = await connect({ ...env(), CRM_EXPORT_BUDGET: "3/600" }, { headersMs: 300 });
    service.reply(hang, { reset: true }, { status: 500, json: { message: "internal" } });
    const timedOut = await server.call("start_export", args("2026-10-01"));
    expect(timedOut.isError).toBe(true);
    expect(timedOut.text).toContain("timed out");
    expect(timedOut.text).toContain("creates another job");
    const cut = await server.call("start_export", args("2026-10-02"));
    expect(cut.isError).toBe(true);
    expect(cut.text).toContain("after the create request was sent");
    const failed = await server.call("start_export", args("2026-10-03"));
    expect(failed.isError).toBe(true);
    expect(failed.text).toContain("HTTP 500");
    expect(creates()).toBe(3);
    expect((await server.runtime.ledger.budgetStatus()).used).toBe(3);
    const refused = await server.call("start_export", args("2026-10-04"));
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain("Local export budget used up: 3 of 3");
    expect(creates()).toBe(3);
  });

  it("a create that never reached the service (connection refused) gives its slot back", async () => {
    const server = await connect({
      ...env(),
      CRM_BASE_URL: `http://127.0.0.1:${await freePort()}`,
      CRM_EXPORT_BUDGET: "1/600",
    });
    for (const day of ["2026-10-01", "2026-10-02"]) {
      const r = await server.call("start_export", args(day));
      expect(r.isError).toBe(true);
      expect(r.text).toContain("connection refused");
      expect((await server.runtime.ledger.budgetStatus()).used).toBe(0);
    }
  });
});
