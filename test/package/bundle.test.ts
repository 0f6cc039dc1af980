import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox } from "../../src/sandbox/types.js";
import { TOOLS } from "../../src/tools/index.js";
import { childTempEnv } from "../setup/temp-folder.js";

// `npm run bundle`'s script builds the .mcpb; the official mcpb CLI unpacks it; the test then
// starts it the way an MCPB host does (manifest's mcp_config, ${__dirname} and ${user_config.*}
// substituted) and talks to it with a real MCP client.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const MCPB = join(ROOT, "node_modules", "@anthropic-ai", "mcpb", "dist", "cli", "cli.js");
const run = promisify(execFile);

interface Manifest {
  manifest_version: string;
  version: string;
  server: {
    entry_point: string;
    mcp_config: { command: string; args: string[]; env: Record<string, string> };
  };
  tools: Array<{ name: string }>;
  user_config: Record<string, { type: string; sensitive?: boolean; required?: boolean }>;
}

let work: string;
let unpacked: string;
let manifest: Manifest;
let sandbox: RunningSandbox;
beforeAll(async () => {
  if (!existsSync(join(ROOT, "dist", "cli.js"))) {
    throw new Error("dist/cli.js missing: run npm run build (npm test does)");
  }
  work = await mkdtemp(join(tmpdir(), "crm-bundle-test-"));
  const bundle = join(work, "crm-insights-mcp.mcpb");
  await run(process.execPath, [join(ROOT, "scripts", "bundle.mjs"), "--out", bundle], {
    cwd: ROOT,
    timeout: 240_000,
  });
  expect((await stat(bundle)).size).toBeGreaterThan(100_000);
  unpacked = join(work, "unpacked");
  await run(process.execPath, [MCPB, "unpack", bundle, unpacked], { timeout: 120_000 });
  manifest = JSON.parse(await readFile(join(unpacked, "manifest.json"), "utf8")) as Manifest;
  sandbox = await startSandbox({ jobSeconds: 0 });
}, 300_000);
afterAll(async () => {
  await sandbox?.close();
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

/** What an MCPB host does with mcp_config; a blank optional field stays a literal placeholder. */
function substitute(value: string, userConfig: Record<string, string>): string {
  return value
    .replaceAll(`\${__dirname}`, unpacked)
    .replace(/\$\{user_config\.([a-z_]+)\}/g, (whole, key: string) => userConfig[key] ?? whole);
}

async function startFromManifest(userConfig: Record<string, string>) {
  const { command, args, env } = manifest.server.mcp_config;
  const resolvedEnv: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: work,
    ...childTempEnv(),
  };
  for (const [name, value] of Object.entries(env))
    resolvedEnv[name] = substitute(value, userConfig);
  const transport = new StdioClientTransport({
    command: command === "node" ? process.execPath : command,
    args: args.map((a) => substitute(a, userConfig)),
    env: resolvedEnv,
    stderr: "pipe",
  });
  const client = new Client({ name: "bundle-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

describe("the MCP Bundle", () => {
  it("has a 0.3 manifest with user_config for URLs, application, keys (sensitive), time zone and data folder", async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
      version: string;
    };
    expect(manifest.manifest_version).toBe("0.3");
    expect(manifest.version).toBe(pkg.version);
    expect(Object.keys(manifest.user_config).sort()).toEqual(
      [
        "application_id",
        "base_url",
        "data_dir",
        "realtime_base_url",
        "recommend_secret_key",
        "secret_key",
        "time_zone",
      ].sort(),
    );
    expect(manifest.user_config.secret_key?.sensitive).toBe(true);
    expect(manifest.user_config.recommend_secret_key?.sensitive).toBe(true);
    expect(manifest.user_config.base_url?.sensitive).toBeUndefined();
    expect(manifest.tools.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
    expect(existsSync(join(unpacked, manifest.server.entry_point))).toBe(true);
    // Runtime dependencies only, no source maps.
    expect(existsSync(join(unpacked, "node_modules", "zod"))).toBe(true);
    expect(existsSync(join(unpacked, "node_modules", "vitest"))).toBe(false);
    expect(existsSync(join(unpacked, "node_modules", "@anthropic-ai", "mcpb"))).toBe(false);
  });

  it("runs as a host starts it: blank optional fields mean the embedded sandbox", async () => {
    // Nothing filled in: hosts pass blank optional fields as literal placeholders.
    const client = await startFromManifest({ data_dir: join(work, "data-sandbox") });
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
      const r = await client.callTool({
        name: "recommend_products",
        arguments: { slot_key: sandbox.slot_keys[0], limit: 2 },
      });
      expect(r.isError).toBeFalsy();
      expect((r.structuredContent as { data_source?: string }).data_source).toBe("sandbox");
    } finally {
      await client.close();
    }
  });

  it("runs against a service with the keys given in user_config", async () => {
    const client = await startFromManifest({
      base_url: sandbox.base_url,
      application_id: sandbox.application_id,
      secret_key: sandbox.secret_key,
      recommend_secret_key: sandbox.recommend_secret_key,
      time_zone: "Asia/Seoul",
      data_dir: join(work, "data-remote"),
    });
    try {
      const r = await client.callTool({
        name: "recommend_products",
        arguments: { slot_key: sandbox.slot_keys[0], limit: 2 },
      });
      expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
      expect((r.structuredContent as { data_source?: string }).data_source).toBe("service");
      expect((r.structuredContent as { item_ids: string[] }).item_ids.length).toBe(2);
    } finally {
      await client.close();
    }
  });
});
