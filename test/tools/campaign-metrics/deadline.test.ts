import { mkdtemp, rm } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.js";
import { createServer } from "../../../src/server.js";
import { fixtureServerForFile, type RecordedRequest } from "../../helpers/fixture-server.js";
import { must } from "../../helpers/must.js";
import { SANDBOX_NOW, toResult } from "../../helpers/tool-harness.js";

/**
 * campaign_metrics against a loopback service that holds its answers: one bound for all of a
 * call's requests (CRM_METRICS_CALL_SECONDS), progress per request, cancellation passed on to
 * the request in flight.
 */

const fixture = fixtureServerForFile();
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function connect(env: Record<string, string>): Promise<Client> {
  const dataDir = await mkdtemp(join(tmpdir(), "crm-metrics-deadline-"));
  const config = loadConfig({
    CRM_BASE_URL: fixture.url,
    CRM_APPLICATION_ID: "app_deadline",
    CRM_SECRET_KEY: "sk_deadline_0123456789abcdef",
    CRM_DATA_DIR: dataDir,
    CRM_LOG_LEVEL: "error",
    ...env,
  });
  const built = createServer(config, { now: () => Date.parse(SANDBOX_NOW) });
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "test", version: "1.0.0" });
  await built.server.connect(b);
  await client.connect(a);
  cleanups.push(async () => {
    await client.close();
    await built.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  return client;
}

interface Held {
  /** Resolves with true when the client closed the request before it was answered. */
  closedEarly: Promise<boolean>;
}

/**
 * Answers `{"campaigns": []}` after `ms`, unless the client gives up first (then no answer);
 * `onHeld` learns of each request as it arrives.
 */
function holdFor(ms: number, held: Held[], onHeld: () => void = () => undefined) {
  return (request: RecordedRequest, response: ServerResponse) => {
    void request;
    onHeld();
    held.push({
      closedEarly: new Promise<boolean>((resolve) => {
        // The service's own slowness, part of what is tested: not a wait for an event.
        const timer = setTimeout(() => {
          if (response.destroyed) return;
          response.writeHead(200, { "content-type": "application/json" });
          response.end(JSON.stringify({ campaigns: [] }));
          resolve(false);
        }, ms);
        response.on("close", () => {
          clearTimeout(timer);
          resolve(!response.writableFinished);
        });
      }),
    });
  };
}

describe("campaign_metrics' bound for all of a call's requests", () => {
  it("ends at the bound though each request alone would fit in it, saying how far it got and what to do", async () => {
    // A window of 3 requests (540 days), each answered after 3 s: under a per-request bound of
    // 4.5 s all three would be answered; under one bound for the call, the second is cut at
    // 4.5 s (1.5 s before its answer) and the third never sent.
    const held: Held[] = [];
    fixture.setDefault(holdFor(3_000, held));
    const client = await connect({ CRM_METRICS_CALL_SECONDS: "4.5" });
    const messages: string[] = [];
    const result = toResult(
      await client.callTool(
        {
          name: "campaign_metrics",
          arguments: { task_from: "2025-05-30", task_to: "2026-11-20" },
        },
        { onprogress: (p) => messages.push(String(p.message)) },
      ),
    );
    expect(result.isError).toBe(true);
    expect(result.text).toContain(
      "campaign_metrics stopped after 4.5 s, its bound for all of a call's requests (CRM_METRICS_CALL_SECONDS): the service had answered 1 of the 3 requests this window takes (one per 180 days).",
    );
    expect(result.text).toContain(
      "Retry shortly, or ask for a shorter window, e.g. campaign_metrics",
    );
    // The shorter window it names is one request's worth, ending where the window ended.
    const suggested = JSON.parse(
      must(/e\.g\. campaign_metrics (\{[^}]*\})/.exec(result.text)?.[1], "example call"),
    );
    expect(suggested).toEqual({
      task_from: "2026-05-25T00:00:00+09:00",
      task_to: "2026-11-21T00:00:00+09:00",
    });
    expect(fixture.requests).toHaveLength(2);
    expect(await Promise.all(held.map((h) => h.closedEarly))).toEqual([false, true]);
    expect(messages.filter((m) => m.startsWith("Campaign metrics: request"))).toEqual([
      expect.stringContaining("request 1 of 3"),
      expect.stringContaining("request 2 of 3"),
    ]);
  }, 20_000);

  it("counts the compared window's requests under the same bound, and advises on the asked window", async () => {
    // The asked window is answered at once; the previous period's request is held past the bound.
    const held: Held[] = [];
    const hold = holdFor(60_000, held);
    let answered = 0;
    fixture.setDefault((request, response) => {
      if (answered++ > 0) return hold(request, response);
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ campaigns: [] }));
    });
    const client = await connect({ CRM_METRICS_CALL_SECONDS: "1.5" });
    const result = toResult(
      await client.callTool({
        name: "campaign_metrics",
        arguments: {
          task_from: "2026-11-01",
          task_to: "2026-11-20",
          compare_to: "previous_period",
        },
      }),
    );
    expect(result.isError).toBe(true);
    expect(result.text).toContain(
      "the service had answered 1 of the 2 requests this window and the one it is compared with take (one per 180 days).",
    );
    // The shorter window ends where the asked one ends, not where the compared one does.
    expect(result.text).toContain(
      'e.g. campaign_metrics {"task_from":"2026-11-11T00:00:00+09:00","task_to":"2026-11-21T00:00:00+09:00"}',
    );
    expect(fixture.requests.map((r) => r.query.get("task_to"))).toEqual([
      "2026-11-21T00:00:00+09:00",
      "2026-11-01T00:00:00+09:00",
    ]);
    expect(await held[0]?.closedEarly).toBe(true);
  }, 20_000);

  it("a single request held past the bound ends the call with the same advice", async () => {
    const held: Held[] = [];
    fixture.setDefault(holdFor(60_000, held));
    const client = await connect({ CRM_METRICS_CALL_SECONDS: "1.5" });
    const result = toResult(
      await client.callTool({
        name: "campaign_metrics",
        arguments: { task_from: "2026-11-01", task_to: "2026-11-20" },
      }),
    );
    expect(result.isError).toBe(true);
    expect(result.text).toContain(
      "campaign_metrics stopped after 1.5 s, its bound for all of a call's requests (CRM_METRICS_CALL_SECONDS): the service had not answered its request.",
    );
    expect(result.text).toContain(
      'e.g. campaign_metrics {"task_from":"2026-11-11T00:00:00+09:00","task_to":"2026-11-21T00:00:00+09:00"}',
    );
    expect(await held[0]?.closedEarly).toBe(true);
  }, 20_000);

  it("passes the client's cancellation on to the request in flight", async () => {
    const held: Held[] = [];
    let requestArrived = () => {};
    const arrived = new Promise<void>((resolve) => {
      requestArrived = resolve;
    });
    fixture.setDefault(holdFor(60_000, held, requestArrived));
    const client = await connect({ CRM_METRICS_CALL_SECONDS: "60" });
    const controller = new AbortController();
    const call = client.callTool(
      { name: "campaign_metrics", arguments: { task_from: "2026-11-01", task_to: "2026-11-20" } },
      { signal: controller.signal },
    );
    await arrived;
    controller.abort();
    await expect(call).rejects.toThrow();
    // The server stopped its request: the service saw the connection close, far before 60 s.
    expect(await held[0]?.closedEarly).toBe(true);
    expect(fixture.requests).toHaveLength(1);
  }, 20_000);
});
