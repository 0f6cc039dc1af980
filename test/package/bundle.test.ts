import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nativeBinaryPlatform } from "../../scripts/lib/native-binary.mjs";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox } from "../../src/sandbox/types.js";
import { TOOLS } from "../../src/tools/index.js";
import { must } from "../helpers/must.js";
import { childRunEnv } from "../setup/temp-folder.js";

// `npm run bundle`'s script builds one .mcpb per platform; the official mcpb CLI unpacks each;
// the test reads which platform each one's native files are built for, then starts the
// linux-x64 one the way an MCPB host does (manifest's mcp_config, ${__dirname} and
// ${user_config.*} substituted) and talks to it with a real MCP client.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const MCPB = join(ROOT, "node_modules", "@anthropic-ai", "mcpb", "dist", "cli", "cli.js");
const run = promisify(execFile);

/** The contract's platforms: `bundle/crm-insights-mcp-<platform>-<arch>.mcpb`. */
const PLATFORMS = [
  { name: "darwin-arm64", os: "darwin", cpu: "arm64", library: "libduckdb.dylib" },
  { name: "darwin-x64", os: "darwin", cpu: "x64", library: "libduckdb.dylib" },
  { name: "win32-x64", os: "win32", cpu: "x64", library: "duckdb.dll" },
  { name: "linux-x64", os: "linux", cpu: "x64", library: "libduckdb.so" },
  { name: "linux-arm64", os: "linux", cpu: "arm64", library: "libduckdb.so" },
] as const;
const NATIVE = /\.(node|so|dylib|dll)$/;

interface Manifest {
  manifest_version: string;
  version: string;
  server: {
    entry_point: string;
    mcp_config: { command: string; args: string[]; env: Record<string, string> };
  };
  tools: Array<{ name: string }>;
  compatibility: { platforms: string[]; runtimes: { node: string } };
  user_config: Record<string, { type: string; sensitive?: boolean; required?: boolean }>;
}

let work: string;
let bundles: string[];
const unpacked = new Map<string, string>();
const manifests = new Map<string, Manifest>();
let sandbox: RunningSandbox;
beforeAll(async () => {
  if (!existsSync(join(ROOT, "dist", "cli.js"))) {
    throw new Error("dist/cli.js missing: run npm run build (npm test does)");
  }
  work = await mkdtemp(join(tmpdir(), "crm-bundle-test-"));
  const out = join(work, "bundles");
  await run(process.execPath, [join(ROOT, "scripts", "bundle.mjs"), "--out-dir", out], {
    cwd: ROOT,
    timeout: 540_000,
    env: { ...process.env, ...childRunEnv() },
  });
  bundles = (await readdir(out)).sort();
  await Promise.all(
    PLATFORMS.map(async ({ name }) => {
      const dir = join(work, name);
      await run(
        process.execPath,
        [MCPB, "unpack", join(out, `crm-insights-mcp-${name}.mcpb`), dir],
        { timeout: 180_000 },
      );
      unpacked.set(name, dir);
      manifests.set(
        name,
        JSON.parse(await readFile(join(dir, "manifest.json"), "utf8")) as Manifest,
      );
    }),
  );
  sandbox = await startSandbox({ jobSeconds: 0 });
}, 720_000);
afterAll(async () => {
  await sandbox?.close();
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

/** Every file under `dir`, relative, with `/` separators. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) =>
      join(e.parentPath, e.name)
        .slice(dir.length + 1)
        .split("\\")
        .join("/"),
    );
}

describe("one MCP Bundle per platform", () => {
  it("npm run bundle writes exactly the five platforms' bundles", () => {
    expect(bundles).toEqual(PLATFORMS.map((p) => `crm-insights-mcp-${p.name}.mcpb`).sort());
  });

  it.each(PLATFORMS)(
    "$name: only its own DuckDB binding, built for it, and a manifest naming only its OS",
    async ({ name, os, cpu, library }) => {
      const dir = unpacked.get(name) as string;
      const manifest = manifests.get(name) as Manifest;
      expect(manifest.compatibility.platforms).toEqual([os]);
      const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
        engines: { node: string };
      };
      expect(manifest.compatibility.runtimes.node).toBe(pkg.engines.node);

      const files = await filesUnder(dir);
      const bindings = new Set(
        files.flatMap((f) => f.split("/").filter((part) => part.startsWith("node-bindings-"))),
      );
      expect([...bindings]).toEqual([`node-bindings-${name}`]);
      const binding = join(dir, "node_modules", "@duckdb", `node-bindings-${name}`);
      // The addon is built for exactly this CPU; DuckDB's macOS library is universal.
      expect(nativeBinaryPlatform(join(binding, "duckdb.node"))).toEqual({ os, cpus: [cpu] });
      const shared = nativeBinaryPlatform(join(binding, library));
      expect(shared.os).toBe(os);
      expect(shared.cpus).toContain(cpu);
      // No native file of any other platform anywhere in the bundle.
      const native = files.filter((f) => NATIVE.test(f));
      expect(native.length).toBeGreaterThanOrEqual(2);
      for (const file of native) {
        const found = nativeBinaryPlatform(join(dir, file));
        expect({ file, os: found.os, has: found.cpus.includes(cpu) }).toEqual({
          file,
          os,
          has: true,
        });
      }
    },
  );
});

/** What an MCPB host does with mcp_config; a blank optional field stays a literal placeholder. */
function substitute(value: string, dir: string, userConfig: Record<string, string>): string {
  return value
    .replaceAll(`\${__dirname}`, dir)
    .replace(/\$\{user_config\.([a-z_]+)\}/g, (whole, key: string) => userConfig[key] ?? whole);
}

async function startFromManifest(userConfig: Record<string, string>) {
  const dir = unpacked.get("linux-x64") as string;
  const manifest = manifests.get("linux-x64") as Manifest;
  const { command, args, env } = manifest.server.mcp_config;
  const resolvedEnv: Record<string, string> = {
    PATH: must(process.env.PATH, "PATH"),
    HOME: work,
    ...childRunEnv(),
  };
  for (const [name, value] of Object.entries(env)) {
    resolvedEnv[name] = substitute(value, dir, userConfig);
  }
  // A host runs `node` from the manifest with a Node of its own: here, the one running the test.
  expect(command).toBe("node");
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: args.map((a) => substitute(a, dir, userConfig)),
    env: resolvedEnv,
    stderr: "pipe",
  });
  const client = new Client({ name: "bundle-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

describe("the linux-x64 bundle, started as a host starts it", () => {
  it("has a 0.3 manifest with user_config for URLs, application, keys (sensitive), time zone and data folder", async () => {
    const manifest = manifests.get("linux-x64") as Manifest;
    const dir = unpacked.get("linux-x64") as string;
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
    expect(existsSync(join(dir, manifest.server.entry_point))).toBe(true);
    // Only the packages the built bin loads: DuckDB and what it needs. The other production
    // dependencies (zod, the MCP SDK, undici...) are bundled into dist/; no dev or optional peer
    // packages (react-dom), no source maps.
    const packages = [
      ...new Set(
        (await filesUnder(join(dir, "node_modules"))).map((f) =>
          f
            .split("/")
            .slice(0, f.startsWith("@") ? 2 : 1)
            .join("/"),
        ),
      ),
    ].sort();
    expect(packages).toEqual([
      "@duckdb/node-api",
      "@duckdb/node-bindings",
      "@duckdb/node-bindings-linux-x64",
      "detect-libc",
    ]);
    expect((await filesUnder(dir)).filter((f) => f.endsWith(".map"))).toEqual([]);
    expect((await stat(join(dir, "node_modules", "@duckdb", "node-api"))).isDirectory()).toBe(true);
  });

  it("blank optional fields mean the embedded sandbox", async () => {
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

  it("against a service with the keys given in user_config: exports, and answers query_export with its DuckDB binding", async () => {
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

      const started = await client.callTool({
        name: "start_export",
        arguments: {
          type: "campaign_event_data",
          campaign_id: sandbox.campaign_ids[0],
          wait_seconds: 30,
        },
      });
      expect(started.isError, JSON.stringify(started.content)).toBeFalsy();
      const job = (started.structuredContent as { job: { _id: string } }).job;
      expect((started.structuredContent as { file_path?: string }).file_path).toBeTypeOf("string");
      const summary = await client.callTool({
        name: "summarize_export",
        arguments: { job_id: job._id },
      });
      expect(summary.isError, JSON.stringify(summary.content)).toBeFalsy();
      const rows = (summary.structuredContent as { rows: number }).rows;
      const query = await client.callTool({
        name: "query_export",
        arguments: {
          job_ids: [job._id],
          sql: "SELECT count(*) AS n, count(*) FILTER (WHERE event_role = 'sent') AS sent FROM events",
        },
      });
      expect(query.isError, JSON.stringify(query.content)).toBeFalsy();
      const result = query.structuredContent as { rows: number[][] };
      const sent = (summary.structuredContent as { totals: { sent: number } }).totals.sent;
      expect(result.rows).toEqual([[rows, sent]]);
      expect(rows).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });
});
