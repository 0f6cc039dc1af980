import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox } from "../../src/sandbox/types.js";
import { must } from "../helpers/must.js";
import { childRunEnv } from "../setup/temp-folder.js";

// The built bin, as a user runs it (npm test builds first).
const CLI = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));
const run = promisify(execFile);
// No 8 characters in common with the temp folder's name ("crm-doctor-"): redaction masks any
// 8 consecutive characters of a key, wherever they appear.
const CANARY = "canary-5e1f09c4a7d2b8";
const WRONG = "wrong-doctor-key-7c2a4b";

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(args: string[], env: Record<string, string>): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], {
      // Only what the test gives: no CRM_* of the machine running the tests leaks in.
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME ?? "/tmp",
        ...childRunEnv(),
        ...env,
      },
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof e.code !== "number") throw error;
    return { code: e.code, stdout: must(e.stdout, "stdout"), stderr: must(e.stderr, "stderr") };
  }
}

/**
 * A loopback proxy in front of the sandbox that records each request's method and path, so the
 * test sees exactly what doctor asked of the service.
 */
async function recordingProxy(
  target: string,
): Promise<{ server: Server; url: string; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer(async (req, res) => {
    seen.push(`${req.method} ${must(req.url, "request URL").split("?")[0]}`);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === "string" && name !== "host" && name !== "connection")
        headers[name] = value;
    }
    const answer = await fetch(`${target}${must(req.url, "request URL")}`, {
      method: req.method ?? "GET",
      headers,
      ...(body.length > 0 ? { body } : {}),
    });
    const type = answer.headers.get("content-type");
    res.writeHead(answer.status, type === null ? {} : { "content-type": type });
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

let sandbox: RunningSandbox;
let proxy: Awaited<ReturnType<typeof recordingProxy>>;
let dataDir: string;
let remote: Record<string, string>;
beforeAll(async () => {
  sandbox = await startSandbox({ secretKey: CANARY, jobSeconds: 0 });
  proxy = await recordingProxy(sandbox.base_url);
  dataDir = await mkdtemp(join(tmpdir(), "crm-doctor-"));
  remote = {
    CRM_BASE_URL: proxy.url,
    CRM_REALTIME_BASE_URL: proxy.url,
    CRM_APPLICATION_ID: sandbox.application_id,
    CRM_SECRET_KEY: CANARY,
    CRM_RECOMMEND_SECRET_KEY: sandbox.recommend_secret_key,
    CRM_DATA_DIR: dataDir,
  };
});
afterAll(async () => {
  proxy?.server.close();
  await sandbox?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe("crm-insights-mcp --version and --help", () => {
  it("--version prints the package.json version on stdout and exits 0", async () => {
    const pkg = JSON.parse(
      await readFile(new URL("../../package.json", import.meta.url), "utf8"),
    ) as { version: string };
    const out = await cli(["--version"], {});
    expect(out).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: "" });
  });

  it("--help prints the usage and the data folder in use on stdout and exits 0", async () => {
    const out = await cli(["--help"], { CRM_DATA_DIR: dataDir });
    expect(out.code).toBe(0);
    expect(out.stderr).toBe("");
    expect(out.stdout).toContain("crm-insights-mcp doctor [--json]");
    // Sandbox mode (no CRM_BASE_URL): its data apart from real data.
    expect(out.stdout).toContain(`Data folder in use: ${join(dataDir, "sandbox")}`);
    const remoteHelp = await cli(["--help"], remote);
    expect(remoteHelp.stdout).toContain(`Data folder in use: ${dataDir} (`);
  });

  it("an unknown command still exits 2 with the usage on stderr", async () => {
    const out = await cli(["--verison"], {});
    expect(out.code).toBe(2);
    expect(out.stdout).toBe("");
    expect(out.stderr).toContain('Unknown command "--verison"');
  });
});

describe("crm-insights-mcp doctor", () => {
  it("passes against a sandbox service with the right keys, one line per check, and creates no export job", async () => {
    proxy.seen.length = 0;
    const out = await cli(["doctor"], remote);
    expect(out.code, out.stdout + out.stderr).toBe(0);
    const lines = out.stdout.trimEnd().split("\n");
    expect(lines.map((l) => l.split(":")[0])).toEqual([
      "ok    config",
      "ok    data folder",
      "ok    readable folders",
      "ok    time zone",
      "ok    export/metrics key",
      "ok    recommend key",
      expect.stringMatching(/^All checks passed/),
    ]);
    expect(out.stdout).toContain(`data folder: ${dataDir} is writable`);
    expect(`${out.stdout}${out.stderr}`).not.toContain(CANARY);
    // One metrics read and one recommend probe: no export job created (the budget is scarce).
    expect(proxy.seen.sort()).toEqual([
      `GET /prod/v2/applications/${sandbox.application_id}/campaigns/metrics`,
      `POST /v1/applications/${sandbox.application_id}/slots/crm-insights-mcp-doctor-probe/recommend`,
    ]);
    expect(await readdir(dataDir)).toEqual([]);
  });

  it("fails with exit 1 on a wrong export key and on a wrong recommend key, never printing either", async () => {
    const out = await cli(["doctor", "--json"], { ...remote, CRM_SECRET_KEY: WRONG });
    expect(out.code).toBe(1);
    const report = JSON.parse(out.stdout) as {
      ok: boolean;
      data_dir: string;
      checks: Array<{ name: string; ok: boolean; detail: string }>;
    };
    expect(report.ok).toBe(false);
    expect(report.data_dir).toBe(dataDir);
    const byName = new Map(report.checks.map((c) => [c.name, c]));
    expect(byName.get("export/metrics key")?.ok).toBe(false);
    expect(byName.get("export/metrics key")?.detail).toMatch(/refused the key in CRM_SECRET_KEY/);
    expect(byName.get("recommend key")?.ok).toBe(true);
    for (const secret of [WRONG, CANARY, WRONG.slice(0, 12), sandbox.recommend_secret_key]) {
      expect(`${out.stdout}${out.stderr}`).not.toContain(secret);
    }

    const rec = await cli(["doctor"], { ...remote, CRM_RECOMMEND_SECRET_KEY: WRONG });
    expect(rec.code).toBe(1);
    expect(rec.stdout).toMatch(/^ok {4}export\/metrics key/m);
    expect(rec.stdout).toMatch(
      /^FAIL {2}recommend key: .*refused the key in CRM_RECOMMEND_SECRET_KEY/m,
    );
    expect(`${rec.stdout}${rec.stderr}`).not.toContain(WRONG);
  });

  it("fails on an unreachable service and on a bad configuration, naming what to fix", async () => {
    const down = await cli(["doctor"], { ...remote, CRM_BASE_URL: "http://127.0.0.1:9" });
    expect(down.code).toBe(1);
    expect(down.stdout).toMatch(
      /^FAIL {2}export\/metrics key: could not reach http:\/\/127\.0\.0\.1:9 .*CRM_BASE_URL/m,
    );

    const placeholder = await cli(["doctor"], {
      ...remote,
      CRM_SECRET_KEY: "<export/metrics secret key>",
    });
    expect(placeholder.code).toBe(1);
    expect(placeholder.stdout).toMatch(
      /^FAIL {2}config: .*CRM_SECRET_KEY: is still a placeholder/ms,
    );
  });

  it("runs in sandbox mode against the embedded sandbox, its data under sandbox/", async () => {
    const out = await cli(["doctor", "--json"], { CRM_DATA_DIR: dataDir });
    expect(out.code, out.stdout + out.stderr).toBe(0);
    const report = JSON.parse(out.stdout) as { ok: boolean; mode: string; data_dir: string };
    expect(report).toMatchObject({ ok: true, mode: "sandbox", data_dir: join(dataDir, "sandbox") });
  });
});
