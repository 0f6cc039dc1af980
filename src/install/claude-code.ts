import { spawn } from "node:child_process";

/**
 * Claude Code keeps its servers in its own files and adds one with `claude mcp add-json`; user
 * scope makes the server available in every project.
 */

export function addJsonArgs(name: string, entry: Record<string, unknown>): string[] {
  return ["mcp", "add-json", "--scope", "user", name, JSON.stringify(entry)];
}

export function removeArgs(name: string): string[] {
  return ["mcp", "remove", "--scope", "user", name];
}

/** The command line as a user types it: POSIX shell quoting, or cmd.exe's on Windows. */
export function commandLine(args: readonly string[], platform: NodeJS.Platform): string {
  return ["claude", ...args].map((a) => quote(a, platform)).join(" ");
}

function quote(arg: string, platform: NodeJS.Platform): string {
  if (/^[A-Za-z0-9_./:@=-]+$/.test(arg)) return arg;
  // cmd.exe hands the line to the program, whose C runtime reads \" as a quote and doubles the
  // backslashes before one (a closing quote included).
  if (platform === "win32") {
    return `"${arg.replace(/(\\*)"/g, '$1$1\\"').replace(/(\\+)$/, "$1$1")}"`;
  }
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/**
 * Runs `claude` with `args` (no shell: nothing is re-quoted), its output shown to the user.
 * Resolves with its exit code, or `undefined` when no `claude` is on the PATH.
 */
export function runClaude(args: readonly string[]): Promise<number | undefined> {
  return new Promise((resolve) => {
    const child = spawn("claude", args, { stdio: ["ignore", "inherit", "inherit"] });
    child.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") resolve(undefined);
      else resolve(1);
    });
    child.once("close", (code) => resolve(code ?? 1));
  });
}
