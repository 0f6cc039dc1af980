import { addJsonArgs, commandLine } from "./claude-code.js";
import { CLIENTS, type ClientName } from "./clients.js";
import { codexTables } from "./codex-config.js";
import { maskSecrets, type ServerCommand, serverEntry } from "./server-entry.js";

/**
 * What `install <client> --print` prints, secrets masked: the JSON to put in the client's file
 * (its servers object with this one server), Codex's TOML tables, or for Claude Code the command
 * that adds it. The
 * README's configurations are made by this function too, and a test holds them equal.
 */
export function configSnippet(
  clientName: ClientName,
  name: string,
  command: ServerCommand,
  env: Record<string, string>,
  platform: NodeJS.Platform,
): string {
  const client = CLIENTS[clientName];
  if (client.kind === "command") {
    return commandLine(addJsonArgs(name, serverEntry(command, maskSecrets(env), true)), platform);
  }
  if (client.kind === "toml") {
    return codexTables(name, {
      command: command.node,
      args: [command.bin],
      env: maskSecrets(env),
    }).trimEnd();
  }
  const entry = serverEntry(command, maskSecrets(env), client.typed);
  return JSON.stringify({ [client.serversKey]: { [name]: entry } }, null, 2);
}
