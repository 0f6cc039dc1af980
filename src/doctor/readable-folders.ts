import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import type { Config } from "../config.js";
import { dataFolderInUse } from "../files/data-folder.js";
import type { DoctorMessages } from "./messages-en.js";

/**
 * Which folders summarize_export and query_export read with this configuration: the data folder,
 * the folders of CRM_READ_DIRS (each checked to be a folder this user can list and read), and
 * whether a stdio client's MCP roots are added (CRM_READ_ROOTS).
 */
export async function checkReadableFolders(
  config: Config,
  m: DoctorMessages,
): Promise<{ name: "readable folders"; ok: boolean; detail: string }> {
  for (const folder of config.readDirs) {
    const problem = await unreadable(folder);
    if (problem !== undefined) {
      return { name: "readable folders", ok: false, detail: m.readDirUnreadable(folder, problem) };
    }
  }
  return {
    name: "readable folders",
    ok: true,
    detail: m.readableFolders(dataFolderInUse(config), config.readDirs, config.readRoots),
  };
}

async function unreadable(folder: string): Promise<string | undefined> {
  try {
    if (!(await stat(folder)).isDirectory()) return "ENOTDIR";
    await access(folder, constants.R_OK | constants.X_OK);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? "error";
  }
}
