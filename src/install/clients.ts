import { join, win32 } from "node:path";

/**
 * The MCP clients `install` configures and where each keeps its servers, per operating system as
 * each client documents it. Pure: the home folder, platform and environment are passed in, so
 * every platform's paths are testable anywhere and tests never reach the real home.
 */

export const CLIENT_NAMES = [
  "claude-desktop",
  "claude-code",
  "vscode",
  "cursor",
  "codex",
  "gemini",
] as const;
export type ClientName = (typeof CLIENT_NAMES)[number];

export interface Place {
  homeDir: string;
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
}

interface FileClient {
  kind: "file";
  label: string;
  /** The top-level object that maps server names to servers. */
  serversKey: "mcpServers" | "servers";
  /** VS Code wants the transport named in each entry. */
  typed: boolean;
  configFile(place: Place): string;
  /** What the user does after the file changed. */
  after: string;
}

/** Codex: config.toml, one `[mcp_servers.NAME]` table a server (codex-config.ts). */
interface TomlClient {
  kind: "toml";
  label: string;
  configFile(place: Place): string;
  after: string;
}

interface CommandClient {
  kind: "command";
  label: string;
}

export type Client = FileClient | TomlClient | CommandClient;

export const CLIENTS: Record<ClientName, Client> = {
  "claude-desktop": {
    kind: "file",
    label: "Claude Desktop",
    serversKey: "mcpServers",
    typed: false,
    // claude_desktop_config.json: ~/Library/Application Support/Claude on macOS,
    // %APPDATA%\Claude on Windows, ~/.config/Claude on Linux.
    configFile: (place) =>
      pathFor(place).join(userConfigFolder(place), "Claude", "claude_desktop_config.json"),
    after: "Quit Claude Desktop completely and start it again to load the server.",
  },
  vscode: {
    kind: "file",
    label: "VS Code",
    serversKey: "servers",
    typed: true,
    // The user profile's mcp.json (MCP: Open User Configuration) of the default profile.
    configFile: (place) => pathFor(place).join(userConfigFolder(place), "Code", "User", "mcp.json"),
    after:
      "VS Code picks the server up from its user mcp.json (MCP: List Servers shows it); another profile has an mcp.json of its own, which --config-file can name.",
  },
  cursor: {
    kind: "file",
    label: "Cursor",
    serversKey: "mcpServers",
    typed: false,
    // The global ~/.cursor/mcp.json (a project's own is .cursor/mcp.json in the project).
    configFile: (place) => pathFor(place).join(place.homeDir, ".cursor", "mcp.json"),
    after: "Cursor shows the server under Settings, MCP; enable it there if it is off.",
  },
  "claude-code": { kind: "command", label: "Claude Code" },
  codex: {
    kind: "toml",
    label: "Codex",
    // $CODEX_HOME/config.toml, ~/.codex by default on every system; the CLI, the IDE extension
    // and the app read the same file.
    configFile: (place) =>
      pathFor(place).join(
        blank(place.env.CODEX_HOME) ?? pathFor(place).join(place.homeDir, ".codex"),
        "config.toml",
      ),
    after: "Codex starts the server in its next session; /mcp in codex lists it.",
  },
  gemini: {
    kind: "file",
    label: "Gemini CLI",
    serversKey: "mcpServers",
    typed: false,
    // The user settings, ~/.gemini/settings.json on every system; GEMINI_CLI_HOME stands in for
    // the home folder.
    configFile: (place) =>
      pathFor(place).join(
        blank(place.env.GEMINI_CLI_HOME) ?? place.homeDir,
        ".gemini",
        "settings.json",
      ),
    after:
      "Gemini CLI connects to MCP servers only in a trusted folder: start gemini in your project and choose Trust folder (later: /permissions); /mcp lists the server.",
  },
};

export function isClientName(name: string | undefined): name is ClientName {
  return CLIENT_NAMES.includes(name as ClientName);
}

/** The folder applications keep their per-user settings in. */
function userConfigFolder(place: Place): string {
  const path = pathFor(place);
  if (place.platform === "win32") {
    return blank(place.env.APPDATA) ?? path.join(place.homeDir, "AppData", "Roaming");
  }
  if (place.platform === "darwin") {
    return path.join(place.homeDir, "Library", "Application Support");
  }
  return blank(place.env.XDG_CONFIG_HOME) ?? path.join(place.homeDir, ".config");
}

/** Windows paths are joined with backslashes even when computed elsewhere (in tests). */
function pathFor(place: Place): { join: (...parts: string[]) => string } {
  return place.platform === "win32" ? win32 : { join };
}

function blank(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}
