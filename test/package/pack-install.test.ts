import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOLS } from "../../src/tools/index.js";
import { must } from "../helpers/must.js";

// The package as a user gets it: `npm pack` (dist built by npm test's pretest), installed from
// the tarball into an empty folder (dependencies from the npm cache npm ci filled, else the
// registry), then started through its bin by a real MCP client.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const run = promisify(execFile);
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

let work: string;
let tarball: string;
let files: string[];
let project: string;
beforeAll(async () => {
  if (!existsSync(join(ROOT, "dist", "cli.js"))) {
    throw new Error("dist/cli.js missing: run npm run build (npm test does)");
  }
  work = await mkdtemp(join(tmpdir(), "crm-pack-"));
  const { stdout } = await run(
    npm,
    ["pack", "--ignore-scripts", "--json", "--pack-destination", work],
    { cwd: ROOT },
  );
  const packed = (
    JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>
  )[0];
  if (packed === undefined) throw new Error(`npm pack printed no package: ${stdout}`);
  tarball = join(work, packed.filename);
  files = packed.files.map((f) => f.path);
  project = join(work, "project");
  await run("mkdir", ["-p", project]);
  await writeFile(join(project, "package.json"), '{ "name": "try-it", "private": true }\n');
  await run(
    npm,
    ["install", "--no-audit", "--no-fund", "--prefer-offline", "--ignore-scripts", tarball],
    { cwd: project, timeout: 240_000 },
  );
}, 300_000);
afterAll(async () => {
  if (work !== undefined) await rm(work, { recursive: true, force: true });
});

describe("the npm package", () => {
  it("ships what runs and what the README links to: no source maps, a LICENSE, every linked file", async () => {
    expect(files).toContain("dist/cli.js");
    expect(files).toContain("LICENSE");
    expect(files).toContain("README.md");
    expect(files).toContain("package.json");
    expect(files.filter((f) => f.endsWith(".map"))).toEqual([]);
    // Test and benchmark code stays in the repository.
    expect(
      files.filter(
        (f) =>
          !/^(dist\/|LICENSE$|README\.md$|package\.json$|server\.json$|docs\/[^/]+$|src\/.*README\.md$)/.test(
            f,
          ),
      ),
    ).toEqual([]);
    const readme = await readFile(join(ROOT, "README.md"), "utf8");
    const links = [...readme.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
      .map((m) => m[1] as string)
      .filter((href) => !/^[a-z]+:/i.test(href));
    expect(links.length).toBeGreaterThan(0);
    for (const href of links)
      expect(files, `README links ${href}`).toContain(href.replace(/^\.\//, ""));
  });

  it("installs from the tarball with only runtime dependencies, and its bin answers --version and lists the tools to an MCP client", async () => {
    const modules = join(project, "node_modules");
    const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
      version: string;
      dependencies: Record<string, string>;
    };
    // The MCP client is for the demo and the tests, not a dependency of ours (the MCP Apps
    // library, a runtime dependency, brings it along for its own use).
    expect(Object.keys(pkg.dependencies)).not.toContain("@modelcontextprotocol/client");
    // devDependencies stay out of the install.
    expect(existsSync(join(modules, "vitest"))).toBe(false);
    expect(existsSync(join(modules, "@anthropic-ai", "mcpb"))).toBe(false);

    const bin = join(modules, ".bin", "crm-insights-mcp");
    const version = await run(bin, ["--version"]);
    expect(version.stdout).toBe(`${pkg.version}\n`);

    const dataDir = join(work, "data");
    const transport = new StdioClientTransport({
      command: bin,
      args: [],
      // Sandbox mode: no service needed; only what a client would pass.
      env: { PATH: must(process.env.PATH, "PATH"), HOME: work, CRM_DATA_DIR: dataDir },
      stderr: "pipe",
    });
    const client = new Client({ name: "pack-install-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
      const listing = await client.callTool({ name: "check_export", arguments: {} });
      expect(listing.isError).toBeFalsy();
      expect((listing.structuredContent as { data_dir?: string }).data_dir).toBe(
        join(dataDir, "sandbox"),
      );
    } finally {
      await client.close();
    }
  });
});
