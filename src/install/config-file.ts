import { constants, existsSync } from "node:fs";
import { copyFile, readFile } from "node:fs/promises";
import { writeFileAtomic } from "../file-io/atomic-file.js";
import { InstallError } from "./server-entry.js";

/**
 * A client's JSON configuration file (Codex's TOML one: codex-config.ts): read leniently (VS Code's mcp.json may hold comments and
 * trailing commas), changed in one place, written back whole with a backup of the old file
 * beside it. A file with comments is not rewritten: writing it back would drop them.
 */

export interface ConfigText {
  data: Record<string, unknown>;
  hasComments: boolean;
}

/** Parses JSON with comments and trailing commas; an empty file is an empty object. */
export function parseConfigText(text: string, file: string): ConfigText {
  const { json, hasComments } = stripJsonc(text);
  if (json.trim() === "") return { data: {}, hasComments };
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (error) {
    throw new InstallError(
      `${file} is not valid JSON (${error instanceof Error ? error.message : String(error)}). Fix it, or move it away to start a new one; nothing was written.`,
    );
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new InstallError(`${file} does not hold a JSON object; nothing was written.`);
  }
  return { data: data as Record<string, unknown>, hasComments };
}

/**
 * Comments become spaces (positions in error messages stay right) and a comma before `}` or `]`
 * is dropped; strings are left exactly as they are.
 */
function stripJsonc(text: string): { json: string; hasComments: boolean } {
  let out = "";
  let hasComments = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === "/" && text[i + 1] === "/") {
      hasComments = true;
      let j = i;
      while (j < text.length && text[j] !== "\n") j++;
      out += " ".repeat(j - i);
      i = j;
    } else if (c === "/" && text[i + 1] === "*") {
      hasComments = true;
      const end = text.indexOf("*/", i + 2);
      const j = end < 0 ? text.length : end + 2;
      out += text.slice(i, j).replace(/[^\n]/g, " ");
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  // Outside strings now only structure and numbers remain: a comma before a closing bracket
  // can be found without a parser once strings are masked.
  const masked = out.replace(/"(?:[^"\\]|\\.)*"/g, (s) => "_".repeat(s.length));
  let json = "";
  for (let k = 0; k < out.length; k++) {
    if (masked[k] === "," && /^\s*[}\]]/.test(masked.slice(k + 1))) json += " ";
    else json += out[k];
  }
  return { json, hasComments };
}

export interface Change {
  /** The file as it will be written. */
  text: string;
  /** A server of that name was there and is replaced. */
  replaced: boolean;
  /** Other servers in the file, kept. */
  kept: string[];
  /** The same entry is there already: nothing to write. */
  unchanged: boolean;
}

/** Puts `entry` under `serversKey`.`name`, keeping every other key and server in order. */
export function withServer(
  current: ConfigText | undefined,
  file: string,
  serversKey: string,
  name: string,
  entry: Record<string, unknown>,
  force: boolean,
): Change {
  const data = { ...(current?.data ?? {}) };
  const servers = data[serversKey] ?? {};
  if (typeof servers !== "object" || servers === null || Array.isArray(servers)) {
    throw new InstallError(
      `${file}: "${serversKey}" is not an object of servers; fix it by hand first. Nothing was written.`,
    );
  }
  const existing = (servers as Record<string, unknown>)[name];
  const kept = Object.keys(servers).filter((n) => n !== name);
  if (existing !== undefined && JSON.stringify(existing) === JSON.stringify(entry)) {
    return { text: "", replaced: false, kept, unchanged: true };
  }
  if (existing !== undefined && !force) {
    throw new InstallError(
      `${file} already has a server named "${name}". Run again with --force to replace it (the old file is kept as a backup), or with --name to add this one under another name. Nothing was written.`,
    );
  }
  if (current?.hasComments) {
    throw new InstallError(
      `${file} has comments, which writing it back would drop. Add the server under "${serversKey}" yourself (the same install command with --print shows its JSON), or remove the comments and run again. Nothing was written.`,
    );
  }
  data[serversKey] = { ...(servers as Record<string, unknown>), [name]: entry };
  return {
    text: `${JSON.stringify(data, null, 2)}\n`,
    replaced: existing !== undefined,
    kept,
    unchanged: false,
  };
}

export async function readConfigFile(file: string): Promise<ConfigText | undefined> {
  const text = await readTextFile(file);
  return text === undefined ? undefined : parseConfigText(text, file);
}

/** The file's text, or undefined when there is no file. */
export async function readTextFile(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new InstallError(
      `Could not read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}. Nothing was written.`,
    );
  }
}

/**
 * Writes `text` to `file` atomically (file-io's writeFileAtomic: the user's only, as it may hold
 * keys), the old file first copied beside it (`<file>.backup`, or `-2`, `-3` ... when that exists,
 * so no earlier backup is lost). Returns the backup's path, if there was a file to back up.
 */
export async function writeWithBackup(file: string, text: string): Promise<string | undefined> {
  let backup: string | undefined;
  if (existsSync(file)) backup = await copyToFreeName(file);
  try {
    await writeFileAtomic(file, text);
  } catch (error) {
    throw diskError(file, error);
  }
  return backup;
}

async function copyToFreeName(file: string): Promise<string> {
  for (let n = 1; ; n++) {
    const backup = n === 1 ? `${file}.backup` : `${file}.backup-${n}`;
    try {
      await copyFile(file, backup, constants.COPYFILE_EXCL);
      return backup;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw diskError(file, error);
    }
  }
}

function diskError(file: string, error: unknown): InstallError {
  const code = (error as NodeJS.ErrnoException).code ?? String(error);
  return new InstallError(`Could not write ${file}: ${code}.`);
}
