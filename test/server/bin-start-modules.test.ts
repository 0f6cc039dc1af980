import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordLoadsTo } from "../helpers/load-recorder.js";
import { must } from "../helpers/must.js";
import { childRunEnv } from "../setup/temp-folder.js";

/**
 * What the bundled bin (scripts/build-bin.mjs) loads to start the MCP server and answer
 * initialize and tools/list: a module loader hook records every module, and the server must
 * need only the bundle's entry and its chunks: no module left unbundled, no DuckDB, none of the
 * subcommands' code.
 */

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = join(ROOT, "dist/cli.js");
const CHUNKS = join(ROOT, "dist/cli-chunks");
const SUBCOMMANDS = [
  "runSandboxCommand",
  "runSummarizeCommand",
  "runQueryCommand",
  "runServeCommand",
  "runDoctorCommand",
  "runReportCommand",
];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "bin-start-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const definesAny = (text: string, names: string[]): string[] =>
  names.filter((name) => new RegExp(`function ${name}\\d*\\(`).test(text));

describe("the bundled bin's server start", () => {
  it("loads only dist/cli.js and chunks of it, none with a subcommand or DuckDB", async () => {
    const loads = join(dir, "loads.txt");
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ["--import", recordLoadsTo(loads), BIN],
      env: {
        PATH: must(process.env.PATH, "PATH"),
        ...childRunEnv(),
        CRM_DATA_DIR: join(dir, "data"),
        CRM_LOG_LEVEL: "warn",
      },
      stderr: "pipe",
    });
    const client = new Client({ name: "bin-start", version: "1.0.0" });
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain("summarize_export");
    } finally {
      await client.close();
    }

    const urls = (await readFile(loads, "utf8")).split("\n").filter((u) => u !== "");
    const files = urls.filter((u) => u.startsWith("file:")).map((u) => fileURLToPath(u));
    expect(files[0]).toBe(BIN);
    const outside = files.filter((f) => f !== BIN && !f.startsWith(`${CHUNKS}/`));
    expect(outside.map((f) => relative(ROOT, f))).toEqual([]);
    expect(urls.some((u) => u.includes("duckdb"))).toBe(false);

    const loaded = await Promise.all(files.map((f) => readFile(f, "utf8")));
    expect(loaded.flatMap((text) => definesAny(text, SUBCOMMANDS))).toEqual([]);
    // Not vacuous: every subcommand is in a chunk the server did not load.
    const all = await Promise.all(
      (await readdir(CHUNKS)).map((name) => readFile(join(CHUNKS, name), "utf8")),
    );
    expect(all.flatMap((text) => definesAny(text, SUBCOMMANDS)).sort()).toEqual(
      [...SUBCOMMANDS].sort(),
    );
  });
});
