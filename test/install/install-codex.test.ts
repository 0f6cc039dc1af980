import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { files, installHarness, KEY, NODE, SERVICE_OPTIONS } from "./install-harness.js";

/**
 * `install codex` against real config.toml files in a temporary home: the server's own tables
 * appended or replaced, and every other byte of the file kept.
 */

const harness = installHarness();
const install = harness.install;
let home: string;
let bin: string;
let dir: string;
let file: string;
beforeEach(() => {
  home = harness.home();
  bin = harness.bin();
  dir = join(home, ".codex");
  file = join(dir, "config.toml");
});

function tables(env?: Record<string, string>, name = "crm-insights"): string {
  const lines = [
    `[mcp_servers.${name}]`,
    `command = "${NODE}"`,
    `args = ["${bin}"]`,
    "tool_timeout_sec = 120",
  ];
  if (env !== undefined) {
    lines.push("", `[mcp_servers.${name}.env]`);
    for (const [k, v] of Object.entries(env)) lines.push(`${k} = "${v}"`);
  }
  return `${lines.join("\n")}\n`;
}

const SERVICE_ENV = {
  CRM_BASE_URL: "https://api.example.com",
  CRM_APPLICATION_ID: "my-app",
  CRM_SECRET_KEY: KEY,
};

/** A user's config.toml: settings, comments, a trusted project and two servers. */
const USER_CONFIG = `# my Codex settings
model = "gpt-5-codex"
instructions = """
Never touch the [mcp_servers.crm-insights] table by hand.
"""

[projects."/home/me/work"]
trust_level = "trusted"

[mcp_servers.github]
command = "npx"
args = [
  "-y",
  "@modelcontextprotocol/server-github",
]

[mcp_servers.github.env]
GITHUB_TOKEN = "ghp_example"

[mcp_servers.linear]
url = "https://mcp.linear.app/mcp"
`;

async function writeConfig(text: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(file, text);
}

describe("install codex --print", () => {
  it("prints the TOML tables, keys masked, and writes nothing", async () => {
    const run = await install(["codex", "--print", ...SERVICE_OPTIONS]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(
      tables({
        ...SERVICE_ENV,
        CRM_SECRET_KEY: "<CRM_SECRET_KEY: not shown; paste the value here>",
      }),
    );
    expect(run.stdout).not.toContain(KEY);
    expect(run.stderr).toContain("keys are masked");
    expect(await readdir(home)).toEqual(["package"]);
  });
});

describe("install codex writes config.toml", () => {
  it("a new ~/.codex/config.toml when there is none: the sandbox, no env table", async () => {
    const run = await install(["codex"]);
    expect(run.code, run.stderr).toBe(0);
    expect(await readFile(file, "utf8")).toBe(tables());
    expect(run.stdout).toContain(`Codex: added "crm-insights" in ${file} (a new file)`);
    expect(run.stdout).toContain("/mcp in codex lists it");
  });

  it("appended to the user's file, every byte before it kept, the old file beside it", async () => {
    await writeConfig(USER_CONFIG);
    const run = await install(["codex", ...SERVICE_OPTIONS]);
    expect(run.code, run.stderr).toBe(0);
    expect(await readFile(file, "utf8")).toBe(`${USER_CONFIG}\n${tables(SERVICE_ENV)}`);
    expect(await readFile(`${file}.backup`, "utf8")).toBe(USER_CONFIG);
    expect(run.stdout).toContain("kept 2 other servers");
    expect(run.stdout).not.toContain(KEY);
  });

  it("a file without a final newline, or with Windows line endings, stays that way above", async () => {
    await writeConfig('model = "o3"');
    expect((await install(["codex"])).code).toBe(0);
    expect(await readFile(file, "utf8")).toBe(`model = "o3"\n\n${tables()}`);

    await writeConfig('model = "o3"\r\n');
    expect((await install(["codex", "--force"])).code).toBe(0);
    expect(await readFile(file, "utf8")).toBe(
      `model = "o3"\r\n\r\n${tables().replace(/\n/g, "\r\n")}`,
    );
  });

  it("CODEX_HOME names the folder", async () => {
    const codexHome = join(home, "codex-home");
    const run = await install(["codex"], { env: { CODEX_HOME: codexHome } });
    expect(run.code, run.stderr).toBe(0);
    expect(await readFile(join(codexHome, "config.toml"), "utf8")).toBe(tables());
    expect(await readdir(home)).toEqual(["codex-home", "package"]);
  });

  it("a name that needs quotes is quoted, and found again by it", async () => {
    expect((await install(["codex", "--name", "crm.prod"])).code).toBe(0);
    expect(await readFile(file, "utf8")).toBe(tables(undefined, '"crm.prod"'));
    const again = await install(["codex", "--name", "crm.prod", ...SERVICE_OPTIONS]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already has a server named "crm.prod"');
  });
});

describe("a Codex server of the same name", () => {
  const WITH_OURS = `model = "o3"

[mcp_servers.crm-insights]
command = "/old/node"
args = ["/old/dist/cli.js"]

[mcp_servers.crm-insights.env]
CRM_TIME_ZONE = "Asia/Seoul"

# the linear server
[mcp_servers.linear]
url = "https://mcp.linear.app/mcp"
`;

  it("is refused without --force; replaced in place with it, the rest and its order kept", async () => {
    await writeConfig(WITH_OURS);
    const refused = await install(["codex", ...SERVICE_OPTIONS]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('already has a server named "crm-insights"');
    expect(await readFile(file, "utf8")).toBe(WITH_OURS);
    expect(await files(dir)).toEqual(["config.toml"]);

    const forced = await install(["codex", "--force", ...SERVICE_OPTIONS]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain('replaced "crm-insights"');
    expect(forced.stdout).toContain("kept 1 other server;");
    expect(await readFile(file, "utf8")).toBe(`model = "o3"

${tables(SERVICE_ENV)}

# the linear server
[mcp_servers.linear]
url = "https://mcp.linear.app/mcp"
`);
    expect(await readFile(`${file}.backup`, "utf8")).toBe(WITH_OURS);
  });

  it("exactly the same tables again change nothing", async () => {
    await writeConfig(USER_CONFIG);
    expect((await install(["codex", ...SERVICE_OPTIONS])).code).toBe(0);
    const written = await readFile(file, "utf8");
    const run = await install(["codex", ...SERVICE_OPTIONS]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("nothing changed");
    expect(await readFile(file, "utf8")).toBe(written);
    expect(await files(dir)).toEqual(["config.toml", "config.toml.backup"]);
  });

  it.each([
    ["dotted keys", '[mcp_servers]\ncrm-insights.command = "node"\n', "line 2"],
    ["an inline table", '[mcp_servers]\ncrm-insights = { command = "node" }\n', "line 2"],
    ["root dotted keys", 'mcp_servers.crm-insights.command = "node"\n', "line 1"],
  ])(
    "written as %s: left alone even with --force, with the table to paste",
    async (_form, text, line) => {
      await writeConfig(text);
      const run = await install(["codex", "--force"]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`in a form install does not edit (${line}:`);
      expect(run.stderr).toContain("Add the [mcp_servers.crm-insights] table yourself");
      expect(run.stderr).toContain("--print");
      expect(await readFile(file, "utf8")).toBe(text);
      expect(await files(dir)).toEqual(["config.toml"]);
    },
  );
});

describe("config.toml install leaves alone", () => {
  it("mcp_servers as one inline table: a table cannot be added to it", async () => {
    const text = 'mcp_servers = { github = { command = "npx" } }\n';
    await writeConfig(text);
    const run = await install(["codex"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("writes mcp_servers in a form install does not edit (line 1:");
    expect(await readFile(file, "utf8")).toBe(text);
  });

  it("a file that is not TOML, naming the line", async () => {
    const text = 'model = "o3"\n[mcp_servers.github\ncommand = "npx"\n';
    await writeConfig(text);
    const run = await install(["codex"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `${file} is not TOML that install can read (line 2: expected "]")`,
    );
    expect(await readFile(file, "utf8")).toBe(text);
    expect(await files(dir)).toEqual(["config.toml"]);
  });
});
