import { execFile } from "node:child_process";

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The built bin's `query` command, with none of this process's CRM_* variables but `env`'s. The
 * caller names the bin (its `dist/` path is what puts its file in the built project).
 */
export function runQueryBin(
  bin: string,
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<Run> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("CRM_")),
  );
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, "query", ...args],
      { env: { ...clean, ...env }, timeout: timeoutMs },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
