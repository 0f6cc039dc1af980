import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { CLIENTS, type ClientName, type Place } from "../../src/install/clients.js";
import { must } from "../helpers/must.js";
import { files, installHarness, KEY, RECOMMEND_KEY, SERVICE_OPTIONS } from "./install-harness.js";

/**
 * `install` run in this process against real files in a temporary home: each client's file
 * format, what is kept, backups, refusals, and that keys never reach the output. Codex's TOML
 * file has tests of its own (install-codex.test.ts).
 */

const harness = installHarness();
const install = harness.install;
let home: string;
let bin: string;
beforeEach(() => {
  home = harness.home();
  bin = harness.bin();
});

describe("install <client> --print", () => {
  it("claude-desktop with nothing given: the sandbox configuration, absolute paths, no env", async () => {
    const run = await install(["claude-desktop", "--print"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      mcpServers: { "crm-insights": { command: "/opt/node/bin/node", args: [bin] } },
    });
    expect(await readdir(home)).toEqual(["package"]);
  });

  it("vscode names its servers object servers and the transport stdio; --name renames", async () => {
    const run = await install(["vscode", "--print", "--name", "crm-prod", ...SERVICE_OPTIONS]);
    expect(run.code).toBe(0);
    const printed = JSON.parse(run.stdout) as {
      servers: Record<string, { type: string; env: Record<string, string> }>;
    };
    expect(printed.servers["crm-prod"]?.type).toBe("stdio");
    expect(printed.servers["crm-prod"]?.env).toEqual({
      CRM_BASE_URL: "https://api.example.com",
      CRM_APPLICATION_ID: "my-app",
      CRM_SECRET_KEY: "<CRM_SECRET_KEY: not shown; paste the value here>",
    });
  });

  it("never shows a key given as an option or taken from the environment", async () => {
    const run = await install(["cursor", "--print", ...SERVICE_OPTIONS], {
      env: { CRM_RECOMMEND_SECRET_KEY: RECOMMEND_KEY },
    });
    expect(run.code).toBe(0);
    expect(`${run.stdout}${run.stderr}`).not.toContain(KEY);
    expect(`${run.stdout}${run.stderr}`).not.toContain(RECOMMEND_KEY);
    expect(run.stdout).toContain('"CRM_RECOMMEND_SECRET_KEY": "<CRM_RECOMMEND_SECRET_KEY: not');
    expect(run.stderr).toContain("keys are masked");
  });

  it("gemini: its mcpServers object, keys masked", async () => {
    const run = await install(["gemini", "--print", ...SERVICE_OPTIONS]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      mcpServers: {
        "crm-insights": {
          command: "/opt/node/bin/node",
          args: [bin],
          env: {
            CRM_BASE_URL: "https://api.example.com",
            CRM_APPLICATION_ID: "my-app",
            CRM_SECRET_KEY: "<CRM_SECRET_KEY: not shown; paste the value here>",
          },
        },
      },
    });
    expect(await readdir(home)).toEqual(["package"]);
  });

  it("claude-code: the claude mcp add-json command, quoted for the shell", async () => {
    const run = await install(["claude-code", "--print"]);
    expect(run.code).toBe(0);
    const match = /^claude mcp add-json --scope user crm-insights '(.*)'\n$/s.exec(run.stdout);
    expect(match, run.stdout).not.toBeNull();
    expect(JSON.parse(match?.[1] as string)).toEqual({
      type: "stdio",
      command: "/opt/node/bin/node",
      args: [bin],
    });
  });

  it("claude-code on Windows: quoted for cmd.exe", async () => {
    const run = await install(["claude-code", "--print", "--name", "crm"], { platform: "win32" });
    const match = /^claude mcp add-json --scope user crm "(.*)"\n$/s.exec(run.stdout);
    expect(match, run.stdout).not.toBeNull();
    expect(
      JSON.parse(must(match?.[1], "printed configuration").replace(/\\"/g, '"')),
    ).toMatchObject({
      type: "stdio",
    });
  });
});

describe("install writes the client's own file, keeping the rest", () => {
  it("claude-desktop: a new file under ~/.config/Claude when there is none", async () => {
    const run = await install(["claude-desktop"]);
    expect(run.code, run.stderr).toBe(0);
    const file = join(home, ".config", "Claude", "claude_desktop_config.json");
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({
      mcpServers: { "crm-insights": { command: "/opt/node/bin/node", args: [bin] } },
    });
    expect(run.stdout).toContain(`added "crm-insights" in ${file} (a new file)`);
    expect(run.stdout).toContain("embedded sandbox");
  });

  it("claude-desktop: other servers and settings stay, the old file is kept beside it", async () => {
    const file = join(home, ".config", "Claude", "claude_desktop_config.json");
    await mkdir(join(home, ".config", "Claude"), { recursive: true });
    const before = `${JSON.stringify(
      {
        globalShortcut: "Ctrl+Space",
        mcpServers: {
          filesystem: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem"] },
          github: { command: "docker", args: ["run", "ghcr.io/github/github-mcp-server"] },
        },
      },
      null,
      2,
    )}\n`;
    await writeFile(file, before);
    const run = await install(["claude-desktop", ...SERVICE_OPTIONS]);
    expect(run.code, run.stderr).toBe(0);
    const after = JSON.parse(await readFile(file, "utf8")) as {
      globalShortcut: string;
      mcpServers: Record<string, { env?: Record<string, string> }>;
    };
    expect(after.globalShortcut).toBe("Ctrl+Space");
    expect(Object.keys(after.mcpServers)).toEqual(["filesystem", "github", "crm-insights"]);
    expect(after.mcpServers["crm-insights"]?.env?.CRM_SECRET_KEY).toBe(KEY);
    expect(await readFile(`${file}.backup`, "utf8")).toBe(before);
    expect(run.stdout).toContain("kept 2 other servers");
    expect(run.stdout).not.toContain(KEY);
  });

  it("vscode: the user mcp.json with inputs, a trailing comma and its servers kept", async () => {
    const dir = join(home, ".config", "Code", "User");
    await mkdir(dir, { recursive: true });
    const file = join(dir, "mcp.json");
    await writeFile(
      file,
      `{
  "inputs": [{ "id": "gh", "type": "promptString", "password": true }],
  "servers": {
    "github": { "type": "http", "url": "https://api.githubcopilot.com/mcp/" },
  },
}
`,
    );
    const run = await install(["vscode"]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({
      inputs: [{ id: "gh", type: "promptString", password: true }],
      servers: {
        github: { type: "http", url: "https://api.githubcopilot.com/mcp/" },
        "crm-insights": { type: "stdio", command: "/opt/node/bin/node", args: [bin] },
      },
    });
    expect(await files(dir)).toEqual(["mcp.json", "mcp.json.backup"]);
  });

  it("vscode: a file with comments is left as it is, with a clear refusal", async () => {
    const dir = join(home, ".config", "Code", "User");
    await mkdir(dir, { recursive: true });
    const file = join(dir, "mcp.json");
    const before = `{
  // my servers
  "servers": { "github": { "type": "http", "url": "https://api.githubcopilot.com/mcp/" } }
}
`;
    await writeFile(file, before);
    const run = await install(["vscode"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("has comments, which writing it back would drop");
    expect(run.stderr).toContain("--print");
    expect(await readFile(file, "utf8")).toBe(before);
    expect(await files(dir)).toEqual(["mcp.json"]);
  });

  it("vscode on macOS and Windows, claude-desktop on both: the documented folders", () => {
    const mac: Place = { homeDir: "/Users/me", platform: "darwin", env: {} };
    const win: Place = {
      homeDir: "C:\\Users\\me",
      platform: "win32",
      env: { APPDATA: "C:\\Users\\me\\AppData\\Roaming" },
    };
    const linux: Place = { homeDir: "/home/me", platform: "linux", env: { XDG_CONFIG_HOME: "/x" } };
    const file = (client: Exclude<ClientName, "claude-code">, place: Place) => {
      const c = CLIENTS[client];
      if (c.kind === "command") throw new Error("not a file client");
      return c.configFile(place);
    };
    expect(file("claude-desktop", mac)).toBe(
      "/Users/me/Library/Application Support/Claude/claude_desktop_config.json",
    );
    expect(file("claude-desktop", win)).toBe(
      "C:\\Users\\me\\AppData\\Roaming\\Claude\\claude_desktop_config.json",
    );
    expect(file("claude-desktop", linux)).toBe("/x/Claude/claude_desktop_config.json");
    expect(file("vscode", mac)).toBe("/Users/me/Library/Application Support/Code/User/mcp.json");
    expect(file("vscode", win)).toBe("C:\\Users\\me\\AppData\\Roaming\\Code\\User\\mcp.json");
    expect(file("vscode", linux)).toBe("/x/Code/User/mcp.json");
    expect(file("cursor", mac)).toBe("/Users/me/.cursor/mcp.json");
    expect(file("cursor", win)).toBe("C:\\Users\\me\\.cursor\\mcp.json");
    expect(file("codex", mac)).toBe("/Users/me/.codex/config.toml");
    expect(file("codex", win)).toBe("C:\\Users\\me\\.codex\\config.toml");
    expect(file("codex", { ...linux, env: { CODEX_HOME: "/srv/codex" } })).toBe(
      "/srv/codex/config.toml",
    );
    expect(file("gemini", mac)).toBe("/Users/me/.gemini/settings.json");
    expect(file("gemini", win)).toBe("C:\\Users\\me\\.gemini\\settings.json");
    expect(file("gemini", { ...linux, env: { GEMINI_CLI_HOME: "/srv/g" } })).toBe(
      "/srv/g/.gemini/settings.json",
    );
  });

  it("cursor: ~/.cursor/mcp.json keeps its servers", async () => {
    const dir = join(home, ".cursor");
    await mkdir(dir);
    const file = join(dir, "mcp.json");
    await writeFile(file, '{"mcpServers":{"linear":{"url":"https://mcp.linear.app/sse"}}}');
    const run = await install(["cursor"]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({
      mcpServers: {
        linear: { url: "https://mcp.linear.app/sse" },
        "crm-insights": { command: "/opt/node/bin/node", args: [bin] },
      },
    });
  });

  it("gemini: ~/.gemini/settings.json keeps its settings and servers; the trust step is said", async () => {
    const dir = join(home, ".gemini");
    await mkdir(dir);
    const file = join(dir, "settings.json");
    const before = `${JSON.stringify(
      {
        security: { auth: { selectedType: "gemini-api-key" } },
        mcpServers: { github: { httpUrl: "https://api.githubcopilot.com/mcp/" } },
      },
      null,
      2,
    )}\n`;
    await writeFile(file, before);
    const run = await install(["gemini", ...SERVICE_OPTIONS]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({
      security: { auth: { selectedType: "gemini-api-key" } },
      mcpServers: {
        github: { httpUrl: "https://api.githubcopilot.com/mcp/" },
        "crm-insights": {
          command: "/opt/node/bin/node",
          args: [bin],
          env: {
            CRM_BASE_URL: "https://api.example.com",
            CRM_APPLICATION_ID: "my-app",
            CRM_SECRET_KEY: KEY,
          },
        },
      },
    });
    expect(await readFile(`${file}.backup`, "utf8")).toBe(before);
    expect(run.stdout).toContain("Gemini CLI: added");
    expect(run.stdout).toContain("only in a trusted folder");
    expect(run.stdout).not.toContain(KEY);
  });

  it("gemini: GEMINI_CLI_HOME stands in for the home folder", async () => {
    const run = await install(["gemini"], { env: { GEMINI_CLI_HOME: join(home, "profile") } });
    expect(run.code, run.stderr).toBe(0);
    const file = join(home, "profile", ".gemini", "settings.json");
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({
      mcpServers: { "crm-insights": { command: "/opt/node/bin/node", args: [bin] } },
    });
    expect(await readdir(home)).toEqual(["package", "profile"]);
  });

  it("--config-file names another file (a VS Code profile's)", async () => {
    const file = join(home, "profile", "mcp.json");
    const run = await install(["vscode", "--config-file", file]);
    expect(run.code, run.stderr).toBe(0);
    expect(Object.keys(JSON.parse(await readFile(file, "utf8")).servers)).toEqual(["crm-insights"]);
  });
});

describe("a server of the same name", () => {
  it("is refused without --force; replaced with it, every earlier file kept as a backup", async () => {
    const file = join(home, ".cursor", "mcp.json");
    expect((await install(["cursor"])).code).toBe(0);
    const first = await readFile(file, "utf8");

    const again = await install(["cursor", ...SERVICE_OPTIONS]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already has a server named "crm-insights"');
    expect(again.stderr).toContain("--force");
    expect(await readFile(file, "utf8")).toBe(first);

    const forced = await install(["cursor", "--force", ...SERVICE_OPTIONS]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain('replaced "crm-insights"');
    const second = await readFile(file, "utf8");
    expect(JSON.parse(second).mcpServers["crm-insights"].env.CRM_BASE_URL).toBe(
      "https://api.example.com",
    );
    expect(await readFile(`${file}.backup`, "utf8")).toBe(first);

    await install(["cursor", "--force"]);
    expect(await readFile(`${file}.backup-2`, "utf8")).toBe(second);
  });

  it("exactly the same entry again changes nothing", async () => {
    expect((await install(["cursor"])).code).toBe(0);
    const run = await install(["cursor"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("nothing changed");
    expect(await files(join(home, ".cursor"))).toEqual(["mcp.json"]);
  });
});

describe("refused before anything is written", () => {
  it("a service URL without its application and key, as the server would refuse it", async () => {
    const run = await install(["claude-desktop", "--base-url", "https://api.example.com"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("CRM_APPLICATION_ID: required when CRM_BASE_URL is set");
    expect(run.stderr).toContain("CRM_SECRET_KEY: required when CRM_BASE_URL is set");
    expect(run.stderr).toContain("Nothing was written");
    expect(await readdir(home)).toEqual(["package"]);
  });

  it("a placeholder key, and the key is not echoed in the refusal", async () => {
    const run = await install([
      "cursor",
      ...SERVICE_OPTIONS.slice(0, 4),
      "--secret-key",
      "<your secret key>",
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("CRM_SECRET_KEY: is still a placeholder");
  });

  it("a Node older than 22.19", async () => {
    const run = await install(["cursor"], { node: "20.18.1" });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("needs Node 22.19 or later");
  });

  it("an unknown client or option is a usage error (exit 2)", async () => {
    expect((await install(["zed"])).code).toBe(2);
    expect((await install(["cursor", "--sekret-key", "x"])).stderr).toContain(
      'unknown option "--sekret-key"',
    );
    expect((await install(["cursor", "--env", "PATH=/tmp"])).code).toBe(2);
  });

  it("a key from the environment is used and said to be, never shown", async () => {
    const run = await install(["cursor", ...SERVICE_OPTIONS.slice(0, 4)], {
      env: { CRM_SECRET_KEY: KEY },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("CRM_SECRET_KEY=(not shown) (from the environment)");
    expect(run.stdout).not.toContain(KEY);
    const written = JSON.parse(await readFile(join(home, ".cursor", "mcp.json"), "utf8"));
    expect(written.mcpServers["crm-insights"].env.CRM_SECRET_KEY).toBe(KEY);
  });
});
