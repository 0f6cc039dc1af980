import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { RunningSandbox } from "../../src/sandbox/types.js";
import { childRunEnv } from "../setup/temp-folder.js";
import { must } from "./must.js";

/** The built bin the "built" test project runs (its global setup builds dist/ first). */
export const BUILT_BIN = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));

/** A `serve --http` child process: its URL and what it printed on stderr so far. */
export interface ServerProcess {
  child: ChildProcess;
  url: string;
  stderr(): string;
}

/**
 * The built bin's `serve --http --port 0` as a child process with exactly `env` (pass
 * `childRunEnv()` in it), resolved with the URL of its first stdout line. Rejected with its
 * stderr when it exits first, or prints nothing within `startMs`: a guard against a hang, not
 * a wait.
 */
export function spawnHttpServer(
  env: Record<string, string | undefined>,
  startMs = 30_000,
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [BUILT_BIN, "serve", "--http", "--port", "0"], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  return new Promise<ServerProcess>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`server did not start: ${stderr}`));
    }, startMs);
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const newline = out.indexOf("\n");
      if (newline === -1) return;
      clearTimeout(timer);
      const { url } = JSON.parse(out.slice(0, newline)) as { url: string };
      resolve({ child, url, stderr: () => stderr });
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited ${code}: ${stderr}`));
    });
  });
}

/**
 * The environment of a server process on `sandbox` with `dataDir` as its data folder: PATH, the
 * run's temp folder and clock (childRunEnv), the sandbox's URL and keys, and a short poll. A
 * test adds what it is about (the database, tokens, a log level).
 */
export function sandboxServerEnv(sandbox: RunningSandbox, dataDir: string): Record<string, string> {
  return {
    PATH: must(process.env.PATH, "PATH"),
    ...childRunEnv(),
    CRM_BASE_URL: sandbox.base_url,
    CRM_APPLICATION_ID: sandbox.application_id,
    CRM_SECRET_KEY: sandbox.secret_key,
    CRM_RECOMMEND_SECRET_KEY: sandbox.recommend_secret_key,
    CRM_DATA_DIR: dataDir,
    CRM_POLL_INTERVAL_SECONDS: "0.2",
  };
}
