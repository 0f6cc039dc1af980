import { mkdtemp, rm } from "node:fs/promises";
import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DENIAL_LIMITS } from "../../src/audit/denial-limit.js";
import { type AuditRecord, openAuditTrail } from "../../src/audit/index.js";
import { loadConfig } from "../../src/config.js";
import { loadHttpSettings } from "../../src/http/http-config.js";
import { type RunningHttpServer, startHttpServer } from "../../src/http/http-server.js";
import { PostgresConnection } from "../../src/ledger/postgres-pool.js";
import { log } from "../../src/log.js";
import type { ToolRuntime } from "../../src/mcp/tool.js";
import { createRuntime } from "../../src/runtime.js";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox } from "../../src/sandbox/types.js";
import { must } from "../helpers/must.js";
import { needs } from "../helpers/needs.js";
import { startTestPostgres, type TestPostgres } from "../helpers/postgres.js";
import { SANDBOX_NOW, sandboxClock } from "../helpers/tool-harness.js";
import { waitUntil } from "../helpers/wait-until.js";
import { postJson, rpcMessages } from "./http-under-test.js";

/**
 * What requests refused for want of a scope leave in the audit trail, over real HTTP, with the
 * trail in the data folder and in PostgreSQL: one record per request however many calls it
 * holds, names from the client escaped and cut, and a bounded number of records per caller
 * however many requests it sends.
 */
const READER = "reader-token-0123456789abcdef";
const EXPORTER = "exporter-token-0123456789abcd";
const MALLORY = "mallory-token-0123456789abcde";
const HOSTILE = "evil\r\x1b[2K2026-11-22T00:00:00.000Z  token  alice  start_export  ok";

/** True where PostgreSQL is missing: those cases skip, or fail under CRM_REQUIRE_ALL_TESTS=1. */
const skipPostgres = (): boolean => needs("postgresql").skip;

const trails = [
  { name: "in the data folder", postgres: false },
  { name: "in PostgreSQL", postgres: true },
] as const;

describe.each(trails)("refused requests, audit trail $name", ({ postgres }) => {
  let sandbox: RunningSandbox;
  let db: TestPostgres | undefined;
  let dataDir: string;
  let server: RunningHttpServer;
  let runtime: ToolRuntime;
  let nextId = 1;

  beforeAll(async () => {
    if (postgres && skipPostgres()) return;
    [sandbox, db] = await Promise.all([
      startSandbox({ now: SANDBOX_NOW, jobSeconds: 1 }),
      postgres ? startTestPostgres() : Promise.resolve(undefined),
    ]);
    dataDir = await mkdtemp(join(tmpdir(), "crm-refused-"));
    const config = loadConfig({
      CRM_BASE_URL: sandbox.base_url,
      CRM_APPLICATION_ID: sandbox.application_id,
      CRM_SECRET_KEY: sandbox.secret_key,
      CRM_RECOMMEND_SECRET_KEY: sandbox.recommend_secret_key,
      CRM_DATA_DIR: dataDir,
      ...(db === undefined ? {} : { CRM_DATABASE_URL: db.url }),
    });
    const settings = loadHttpSettings(["--http", "--port", "0"], {
      CRM_HTTP_TOKENS: `reader:${READER}:crm.read,exporter:${EXPORTER}:crm.export,mallory:${MALLORY}:crm.export`,
    });
    runtime = createRuntime(config, { now: sandboxClock().now });
    server = await startHttpServer({ config, settings, runtime, version: "test" });
  }, 60_000);

  afterAll(async () => {
    await server?.close(1000);
    await Promise.all([sandbox?.close(), db?.stop()]);
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  }, 30_000);

  const call = (name: string, args: Record<string, unknown> = {}) => ({
    jsonrpc: "2.0",
    id: nextId++,
    method: "tools/call",
    params: { name, arguments: args },
  });
  const post = (body: unknown, token: string) =>
    postJson(server.url, body, {
      Authorization: `Bearer ${token}`,
      "MCP-Protocol-Version": "2025-06-18",
    });
  /**
   * A call the token may make, answered after its own record is written: the trail writes in
   * order, so every record of the requests before it is written too.
   */
  const settle = async (token: string, tool: string, args: Record<string, unknown>) => {
    const response = await post(call(tool, args), token);
    expect(response.status).toBe(200);
    await rpcMessages(response);
  };
  const recordsOf = async (caller: string): Promise<AuditRecord[]> =>
    runtime.audit.list({ caller });

  it.skipIf(postgres && skipPostgres())(
    "records a batch of 2,000 denied calls as one record naming the tools it asked for",
    async () => {
      const before = (await runtime.audit.list()).length;
      const batch = [
        ...Array.from({ length: 1_990 }, (_, i) =>
          call("start_export", { type: "campaign_event_data", campaign_id: `cmp_${i}` }),
        ),
        ...Array.from({ length: 10 }, (_, i) => call(`${HOSTILE}-${i}`)),
      ];
      const response = await post(batch, READER);
      expect(response.status).toBe(403);
      await response.text();
      await settle(READER, "check_export", {});

      const added = (await runtime.audit.list()).slice(before);
      expect(added.map((r) => `${r.caller_kind} ${r.caller} ${r.tool} ${r.outcome}`)).toEqual([
        "token reader (batch) denied",
        "token reader check_export ok",
      ]);
      expect(added[0]?.arguments).toEqual({
        messages: 2_000,
        tool_calls: 2_000,
        tools: ["start_export"],
        unknown_tools: 10,
      });
      expect(JSON.stringify(added)).not.toContain("evil");
    },
    60_000,
  );

  it.skipIf(postgres && skipPostgres())(
    "keeps a made-up tool name of a refused call escaped and cut",
    async () => {
      const name = `${HOSTILE}${"A".repeat(5_000)}`;
      // An unknown tool needs crm.read, which this token lacks: refused before dispatch.
      const response = await post(call(name), EXPORTER);
      expect(response.status).toBe(403);
      await response.text();
      await settle(EXPORTER, "start_export", { type: "no_such_type" });

      const [refused] = (await recordsOf("exporter")).filter((r) => r.outcome === "denied");
      const tool = must(refused?.tool, "tool of the refused request");
      expect(tool.startsWith("evil\\r\\x1b[2K2026-11-22T00:00:00.000Z")).toBe(true);
      expect(tool.length).toBeLessThan(100);
      // biome-ignore lint/suspicious/noControlCharactersInRegex: what must not be there
      expect(tool).not.toMatch(/[\u0000-\u001f]/);
    },
  );

  it.skipIf(postgres && skipPostgres())(
    "writes a bounded number of records for one caller's many refused requests, and counts the rest",
    async () => {
      const started = Date.now();
      const requests = 60;
      for (let i = 0; i < requests; i++) {
        const response = await post(call("campaign_metrics", { task_from: "2026-11-01" }), MALLORY);
        expect(response.status).toBe(403);
        await response.text();
      }
      const windows = Math.ceil((Date.now() - started) / DENIAL_LIMITS.windowMs) + 1;
      // Closing the server closes the trail, which writes the count of what it left out.
      await server.close(1000);

      const database = db === undefined ? undefined : new PostgresConnection(db.url);
      const trail = openAuditTrail({ database, dataFolder: dataDir });
      const records = await trail.list({ caller: "mallory" }).finally(async () => {
        await trail.close();
        await database?.close();
      });
      const kept = records.filter((r) => r.tool === "campaign_metrics");
      const counts = records.filter((r) => r.tool === "(suppressed)");
      expect(kept.length).toBeGreaterThanOrEqual(DENIAL_LIMITS.perWindow);
      expect(records.length).toBeLessThanOrEqual(windows * (DENIAL_LIMITS.perWindow + 1));
      const suppressed = counts.reduce(
        (sum, r) => sum + (r.arguments as { suppressed: number }).suppressed,
        0,
      );
      // Every refusal is either a record or counted in one.
      expect(kept.length + suppressed).toBe(requests);
      expect(counts[0]?.error).toMatch(/^\d+ more denials suppressed$/);
    },
    60_000,
  );
});

describe("a refused request while the trail's database does not answer", () => {
  let sandbox: RunningSandbox;
  let dataDir: string;
  let blackHole: Server;
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    sandbox = await startSandbox({ now: SANDBOX_NOW, jobSeconds: 1 });
    dataDir = await mkdtemp(join(tmpdir(), "crm-refused-hang-"));
    // Takes connections and never says a word: every query waits for pg's connect timeout.
    blackHole = createServer((socket) => {
      sockets.add(socket);
      socket.on("error", () => undefined);
    });
    await new Promise<void>((resolve) => blackHole.listen(0, "127.0.0.1", resolve));
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => blackHole?.close(resolve));
    await sandbox?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("answers a refused batch of 2,000 calls, and logs that the trail's database does not answer", async () => {
    const { port } = blackHole.address() as AddressInfo;
    const config = loadConfig({
      CRM_BASE_URL: sandbox.base_url,
      CRM_APPLICATION_ID: sandbox.application_id,
      CRM_SECRET_KEY: sandbox.secret_key,
      CRM_RECOMMEND_SECRET_KEY: sandbox.recommend_secret_key,
      CRM_DATA_DIR: dataDir,
      CRM_DATABASE_URL: `postgres://crm:secret@127.0.0.1:${port}/crm`,
    });
    const settings = loadHttpSettings(["--http", "--port", "0"], {
      CRM_HTTP_TOKENS: `reader:${READER}:crm.read`,
    });
    const runtime = createRuntime(config, { now: sandboxClock().now });
    const server = await startHttpServer({ config, settings, runtime, version: "test" });
    const warn = vi.spyOn(log, "warn").mockImplementation(() => undefined);
    try {
      // A record per call, each awaited in turn (2 s at most), kept this answer over an hour.
      const batch = Array.from({ length: 2_000 }, (_, i) => ({
        jsonrpc: "2.0",
        id: i + 1,
        method: "tools/call",
        params: { name: "start_export", arguments: { type: "campaign_event_data" } },
      }));
      const response = await postJson(server.url, batch, { Authorization: `Bearer ${READER}` });
      expect(response.status).toBe(403);
      await response.text();
      await waitUntil(() => server.inFlight() === 0, "no request in flight");
      // The record goes on without the request: the trail reaches for its database.
      await waitUntil(() => sockets.size > 0, "the trail connecting to its database");
      // The record is held until the database answers (ledger/postgres-backlog.ts); that it
      // does not answer is logged once, naming the database but never its password.
      await waitUntil(() => warn.mock.calls.length > 0, "the unanswered database logged");
      await server.close(1000);
      expect(warn).toHaveBeenCalledWith(
        "database unavailable: calls that need it fail until it answers again",
        expect.objectContaining({ database: expect.stringContaining("127.0.0.1") }),
      );
      expect(JSON.stringify(warn.mock.calls)).not.toContain("secret");
    } finally {
      await server.close(1000);
      warn.mockRestore();
    }
  }, 60_000);
});
