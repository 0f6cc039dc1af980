import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { resolve } from "node:path";
import { isSupportedNode, MIN_NODE_VERSION } from "../node-version.js";
import { builtFile } from "../package-files.js";
import { addJsonArgs, removeArgs, runClaude } from "./claude-code.js";
import { CLIENT_NAMES, CLIENTS, type ClientName, isClientName, type Place } from "./clients.js";
import { withCodexServer } from "./codex-config.js";
import { readConfigFile, readTextFile, withServer, writeWithBackup } from "./config-file.js";
import {
  InstallError,
  isSecretVariable,
  SETTINGS,
  type ServerCommand,
  type ServerEnv,
  serverEntry,
  serverEnv,
} from "./server-entry.js";
import { configSnippet } from "./snippet.js";

/**
 * `crm-insights-mcp install <client>`: adds this server to an MCP client's configuration, or with
 * --print shows what it would add. Exit 0 when done, 1 when refused (nothing written), 2 on bad
 * usage. Secrets are never printed: shown masked, also in --print.
 */

export const INSTALL_USAGE = `Usage: crm-insights-mcp install <${CLIENT_NAMES.join("|")}>
         [--print] [--force] [--name N] [--config-file PATH]
         [--base-url URL] [--realtime-base-url URL] [--application-id ID]
         [--secret-key KEY] [--recommend-secret-key KEY] [--time-zone TZ] [--data-dir DIR]
         [--env CRM_NAME=VALUE]...
  Adds this server (the Node running this command and this package's bin, by absolute path) to
  the client's configuration, keeping every other server and setting and a backup of the old
  file beside it. With no service values (options or CRM_* variables in this environment) the
  server runs on the embedded sandbox: synthetic data, no keys.
  --print        write nothing; print the JSON (codex: the TOML tables; claude-code: the
                 command) with keys masked
  --force        replace a server of the same name
  --name N       the server's name in the client (default crm-insights)
  --config-file  the client's file to change instead of the usual one (e.g. a VS Code profile)
  Keys given as options are never shown; to keep them out of the shell history, set
  CRM_SECRET_KEY / CRM_RECOMMEND_SECRET_KEY in the environment instead.`;

const DEFAULT_NAME = "crm-insights";
const FLAGS = new Set(["--print", "--force"]);
const VALUE_OPTIONS = new Set([
  "--name",
  "--config-file",
  "--env",
  ...SETTINGS.map((s) => s.option),
]);

interface Parsed {
  client: ClientName;
  flags: Set<string>;
  values: Map<string, string>;
  extra: Map<string, string>;
}

export interface InstallIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  place: Place;
  command: ServerCommand;
  nodeVersion: string;
}

function defaultIo(): InstallIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    place: { homeDir: homedir(), platform: process.platform, env: process.env },
    command: { node: process.execPath, bin: builtFile("cli.js") },
    nodeVersion: process.versions.node,
  };
}

export async function runInstallCommand(
  args: readonly string[],
  io: InstallIo = defaultIo(),
): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    io.stdout(`${INSTALL_USAGE}\n`);
    return 0;
  }
  let parsed: Parsed;
  try {
    parsed = parse(args);
  } catch (error) {
    io.stderr(`install: ${(error as Error).message}\n\n${INSTALL_USAGE}\n`);
    return 2;
  }
  try {
    return await install(parsed, io);
  } catch (error) {
    if (!(error instanceof InstallError)) throw error;
    io.stderr(`install: ${error.message}\n`);
    return 1;
  }
}

function parse(args: readonly string[]): Parsed {
  const [client, ...rest] = args;
  if (!isClientName(client)) {
    throw new Error(
      client === undefined
        ? "name the client to configure."
        : `unknown client "${client}"; expected one of ${CLIENT_NAMES.join(", ")}.`,
    );
  }
  const flags = new Set<string>();
  const values = new Map<string, string>();
  const extra = new Map<string, string>();
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    if (FLAGS.has(arg)) {
      flags.add(arg);
      continue;
    }
    if (!VALUE_OPTIONS.has(arg)) throw new Error(`unknown option "${arg}".`);
    const value = rest[++i];
    if (value === undefined || value === "") throw new Error(`${arg} needs a value.`);
    if (arg === "--env") {
      const match = /^(CRM_[A-Z0-9_]+)=(.*)$/s.exec(value);
      if (match === null)
        throw new Error(`--env takes CRM_NAME=VALUE, not "${value.split("=")[0]}".`);
      extra.set(match[1] as string, match[2] as string);
    } else {
      values.set(arg, value);
    }
  }
  const name = values.get("--name") ?? DEFAULT_NAME;
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name)) {
    throw new Error(
      "--name takes letters, digits, '.', '_' and '-' (at most 64, starting with a letter or digit).",
    );
  }
  return { client, flags, values, extra };
}

async function install(parsed: Parsed, io: InstallIo): Promise<number> {
  if (!isSupportedNode(io.nodeVersion)) {
    throw new InstallError(
      `this Node is ${io.nodeVersion}; the server needs Node ${MIN_NODE_VERSION} or later (22 or 24 LTS). Run install with that Node: its path is what the client will start.`,
    );
  }
  if (!existsSync(io.command.bin)) {
    throw new InstallError(`${io.command.bin} is missing: run npm run build first.`);
  }
  const server = serverEnv(parsed.values, parsed.extra, io.place.env, io.place.homeDir);
  const name = parsed.values.get("--name") ?? DEFAULT_NAME;
  const print = parsed.flags.has("--print");
  if (print) {
    io.stdout(`${configSnippet(parsed.client, name, io.command, server.env, io.place.platform)}\n`);
    if (hasSecrets(server)) io.stderr(keysMaskedNote());
    return 0;
  }
  const client = CLIENTS[parsed.client];
  if (client.kind === "command") {
    if (parsed.values.has("--config-file")) {
      throw new InstallError(
        "--config-file does not apply to claude-code: claude keeps its own files.",
      );
    }
    return installClaudeCode(name, server, parsed.flags.has("--force"), io);
  }
  const configFile = parsed.values.get("--config-file");
  const file = configFile === undefined ? client.configFile(io.place) : resolve(configFile);
  const force = parsed.flags.has("--force");
  const change =
    client.kind === "toml"
      ? withCodexServer(
          await readTextFile(file),
          file,
          name,
          { command: io.command.node, args: [io.command.bin], env: server.env },
          force,
        )
      : withServer(
          await readConfigFile(file),
          file,
          client.serversKey,
          name,
          serverEntry(io.command, server.env, client.typed),
          force,
        );
  if (change.unchanged) {
    io.stdout(`${client.label}: "${name}" in ${file} is already exactly this; nothing changed.\n`);
    return 0;
  }
  const backup = await writeWithBackup(file, change.text);
  const others =
    change.kept.length === 0
      ? ""
      : `; kept ${change.kept.length} other server${change.kept.length === 1 ? "" : "s"}`;
  io.stdout(
    `${client.label}: ${change.replaced ? "replaced" : "added"} "${name}" in ${file}${others}${backup === undefined ? " (a new file)" : `; the old file is at ${backup}`}.\n${describe(io.command, server)}${client.after}\n`,
  );
  return 0;
}

async function installClaudeCode(
  name: string,
  server: ServerEnv,
  force: boolean,
  io: InstallIo,
): Promise<number> {
  const entry = serverEntry(io.command, server.env, true);
  const cannotRun = (why: string) =>
    new InstallError(
      `${why} Run this yourself${hasSecrets(server) ? " (keys masked: give each in place of its <...> value)" : ""}:\n${configSnippet("claude-code", name, io.command, server.env, io.place.platform)}`,
    );
  // cmd.exe's quoting cannot carry every character a key or path may hold safely.
  if (io.place.platform === "win32") throw cannotRun("On Windows install does not run claude.");
  if (force) await runClaude(removeArgs(name));
  const code = await runClaude(addJsonArgs(name, entry));
  if (code === undefined) throw cannotRun("No claude command on the PATH.");
  if (code !== 0) {
    throw new InstallError(
      `claude mcp add-json failed (exit ${code})${force ? "" : `; if a server named "${name}" exists, run again with --force`}.`,
    );
  }
  io.stdout(
    `Claude Code: added "${name}" for every project (user scope).\n${describe(io.command, server)}Start a new Claude Code session; /mcp lists it.\n`,
  );
  return 0;
}

/** The command and where each value came from; secrets never shown. */
function describe(command: ServerCommand, server: ServerEnv): string {
  const values = Object.entries(server.env).map(
    ([name, value]) =>
      `${name}=${isSecretVariable(name) ? "(not shown)" : value} (${server.sources[name] === "environment" ? "from the environment" : "given"})`,
  );
  const mode =
    server.env.CRM_BASE_URL === undefined
      ? "the embedded sandbox (no CRM_BASE_URL): synthetic data, no keys"
      : "the service";
  return `  starts: ${command.node} ${command.bin}\n  runs on: ${mode}\n${values.map((v) => `  ${v}\n`).join("")}`;
}

function hasSecrets(server: ServerEnv): boolean {
  return Object.keys(server.env).some(isSecretVariable);
}

function keysMaskedNote(): string {
  return "install: keys are masked in this output; run without --print to write them, or paste each key in place of its <...> value.\n";
}
