import { mkdtempSync, rmSync } from "node:fs";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { type InstallIo, runInstallCommand } from "../../src/install/cli.js";
import type { Place } from "../../src/install/clients.js";

/**
 * `install` run in this process against real files in a temporary home of each test's own, with
 * a stand-in bin and the Node path /opt/node/bin/node.
 */

export const KEY = "sk_live_7f3a9c1e5b2d8f4a6e0b";
export const RECOMMEND_KEY = "rk_live_0b6e4a8f2d5b1e9c3a7f";
export const NODE = "/opt/node/bin/node";

export const SERVICE_OPTIONS = [
  "--base-url",
  "https://api.example.com",
  "--application-id",
  "my-app",
  "--secret-key",
  KEY,
];

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export interface InstallOptions {
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  node?: string;
}

export interface InstallHarness {
  /** The test's home folder. */
  home(): string;
  /** The stand-in bin's absolute path. */
  bin(): string;
  install(args: string[], options?: InstallOptions): Promise<Run>;
}

/** Registers the temporary home's setup and removal for each test of the calling file. */
export function installHarness(): InstallHarness {
  let home = "";
  let bin = "";
  beforeEach(async () => {
    home = mkdtempSync(join(tmpdir(), "crm-install-test-"));
    bin = join(home, "package", "dist", "cli.js");
    await mkdir(join(home, "package", "dist"), { recursive: true });
    await writeFile(bin, "// the bin\n");
  });
  afterEach(() => {
    rmSync(home, { recursive: true, force: true });
  });
  return {
    home: () => home,
    bin: () => bin,
    async install(args, options = {}) {
      let stdout = "";
      let stderr = "";
      const place: Place = {
        homeDir: home,
        platform: options.platform ?? "linux",
        env: options.env ?? {},
      };
      const io: InstallIo = {
        stdout: (text) => {
          stdout += text;
        },
        stderr: (text) => {
          stderr += text;
        },
        place,
        command: { node: NODE, bin },
        nodeVersion: options.node ?? "22.19.0",
      };
      const code = await runInstallCommand(args, io);
      return { code, stdout, stderr };
    },
  };
}

export async function files(dir: string): Promise<string[]> {
  return (await readdir(dir)).sort();
}
