import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { must } from "../helpers/must.js";
import { childRunEnv } from "../setup/temp-folder.js";

/**
 * `install` through the built bin, as a user runs it: what --print shows starts the server as
 * printed, and Claude Code is configured through its own `claude` command (a stand-in on PATH
 * that records its arguments, since the real one is not installed here).
 */
const BIN = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));
const KEY = "sk_live_7f3a9c1e5b2d8f4a6e0b";

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "crm-install-bin-"));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

function runBin(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, "install", ...args],
      { env: { HOME: home, ...childRunEnv(), ...env } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe("install claude-desktop --print", () => {
  it("prints a configuration with absolute paths that starts the server on the sandbox as printed", async () => {
    const printed = await runBin(["claude-desktop", "--print"], {
      PATH: must(process.env.PATH, "PATH"),
    });
    expect(printed.code, printed.stderr).toBe(0);
    const config = JSON.parse(printed.stdout) as {
      mcpServers: Record<string, { command: string; args: string[]; env?: unknown }>;
    };
    const entry = config.mcpServers["crm-insights"];
    if (entry === undefined) throw new Error(`no crm-insights server in ${printed.stdout}`);
    expect(isAbsolute(entry.command)).toBe(true);
    expect(entry.command).toBe(process.execPath);
    expect(entry.args).toEqual([BIN]);
    expect(entry.env).toBeUndefined();

    // As a client starts it: the printed command and arguments, the printed env (none), no PATH
    // (Claude Desktop on macOS often has none with node on it) and a home of the test's own.
    const transport = new StdioClientTransport({
      command: entry.command,
      args: entry.args,
      env: { HOME: home, ...childRunEnv() },
      stderr: "pipe",
    });
    const client = new Client({ name: "install-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain("query_export");
      const list = await client.callTool({ name: "check_export", arguments: {} });
      expect(list.isError, JSON.stringify(list.content)).toBeFalsy();
      expect((list.structuredContent as { data_source?: string }).data_source).toBe("sandbox");
    } finally {
      await client.close();
    }
  });
});

describe("install codex --print and gemini --print", () => {
  it("codex: the [mcp_servers.crm-insights] table with this Node and bin, nothing written", async () => {
    const printed = await runBin(["codex", "--print"], { PATH: must(process.env.PATH, "PATH") });
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toBe(
      `[mcp_servers.crm-insights]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(BIN)}]\ntool_timeout_sec = 120\n`,
    );
    expect(await readdir(home)).toEqual([]);
  });

  it("gemini: its mcpServers entry starts the server as printed", async () => {
    const printed = await runBin(["gemini", "--print"], { PATH: must(process.env.PATH, "PATH") });
    expect(printed.code, printed.stderr).toBe(0);
    const config = JSON.parse(printed.stdout) as {
      mcpServers: Record<string, { command: string; args: string[] }>;
    };
    const entry = config.mcpServers["crm-insights"];
    if (entry === undefined) throw new Error(`no crm-insights server in ${printed.stdout}`);
    expect(entry).toEqual({ command: process.execPath, args: [BIN] });
    const transport = new StdioClientTransport({
      command: entry.command,
      args: entry.args,
      env: { HOME: home, ...childRunEnv() },
      stderr: "pipe",
    });
    const client = new Client({ name: "install-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain("campaign_metrics");
    } finally {
      await client.close();
    }
    expect(await readdir(home)).not.toContain(".gemini");
  });
});

describe("install claude-code", () => {
  async function fakeClaude(): Promise<{ path: string; calls: () => Promise<string[][]> }> {
    const dir = join(home, "bin");
    const log = join(home, "claude-calls.json");
    await writeFile(log, "");
    // A stand-in for the claude CLI: one JSON line per call with its arguments.
    await mkdir(dir);
    await writeFile(
      join(dir, "claude"),
      `#!${process.execPath}\nrequire("node:fs").appendFileSync(${JSON.stringify(log)}, JSON.stringify(process.argv.slice(2)) + "\\n");\n`,
    );
    await chmod(join(dir, "claude"), 0o755);
    return {
      path: dir,
      calls: async () =>
        (await readFile(log, "utf8"))
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => JSON.parse(l) as string[]),
    };
  }

  it("runs claude mcp add-json with the key, and shows the key to no one else", async () => {
    const claude = await fakeClaude();
    const run = await runBin(
      [
        "claude-code",
        "--force",
        "--base-url",
        "https://api.example.com",
        "--application-id",
        "my-app",
        "--secret-key",
        KEY,
      ],
      { PATH: `${claude.path}:${process.env.PATH}` },
    );
    expect(run.code, run.stderr).toBe(0);
    const calls = await claude.calls();
    expect(calls[0]).toEqual(["mcp", "remove", "--scope", "user", "crm-insights"]);
    expect(calls[1]?.slice(0, 5)).toEqual(["mcp", "add-json", "--scope", "user", "crm-insights"]);
    expect(JSON.parse(calls[1]?.[5] as string)).toEqual({
      type: "stdio",
      command: process.execPath,
      args: [BIN],
      env: {
        CRM_BASE_URL: "https://api.example.com",
        CRM_APPLICATION_ID: "my-app",
        CRM_SECRET_KEY: KEY,
      },
    });
    expect(run.stdout).toContain('Claude Code: added "crm-insights"');
    expect(`${run.stdout}${run.stderr}`).not.toContain(KEY);
  });

  it("without a claude command: says so and prints the command to run, key masked", async () => {
    const run = await runBin(
      [
        "claude-code",
        "--base-url",
        "https://api.example.com",
        "--application-id",
        "my-app",
        "--secret-key",
        KEY,
      ],
      { PATH: join(home, "nothing-here") },
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("No claude command on the PATH.");
    expect(run.stderr).toContain("claude mcp add-json --scope user crm-insights '");
    expect(run.stderr).toContain("<CRM_SECRET_KEY: not shown; paste the value here>");
    expect(`${run.stdout}${run.stderr}`).not.toContain(KEY);
  });
});
