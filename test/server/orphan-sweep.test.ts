import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitUntil } from "../helpers/wait-until.js";

const BIN = new URL("../../dist/cli.js", import.meta.url);

let dataDir: string;
beforeEach(async () => {
  if (!existsSync(BIN)) throw new Error("dist/cli.js missing: run npm run build (npm test does)");
  dataDir = await mkdtemp(join(tmpdir(), "crm-sweep-"));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

async function deadPid(): Promise<number> {
  const gone = spawn(process.execPath, ["-e", ""]);
  const pid = gone.pid;
  await new Promise((r) => gone.once("exit", r));
  if (pid === undefined) throw new Error("no pid");
  return pid;
}

describe("server start", () => {
  it("removes temporary files of processes that are gone, before any download", async () => {
    const tag = createHash("sha256").update(hostname()).digest("hex").slice(0, 8);
    const dead = await deadPid();
    // Sandbox mode (no CRM_BASE_URL) keeps its data in <data dir>/sandbox.
    const folder = join(dataDir, "sandbox");
    const exportsDir = join(folder, "exports");
    await mkdir(exportsDir, { recursive: true });
    const orphans = [
      join(exportsDir, `.${tag}-${dead}.00112233aabbccdd.part`),
      join(folder, `export-jobs-abc.json.${tag}-${dead}.00112233aabbccdd.tmp`),
      join(folder, `export-jobs-abc.json.lock.${tag}-${dead}.00112233aabbccdd.tmp`),
      join(folder, `export-jobs-abc.json.${dead}.0a1b2c3d.tmp`),
    ];
    const kept = [
      join(exportsDir, `.${tag}-${process.pid}.00112233aabbccdd.part`),
      join(exportsDir, "job-1-report.csv"),
    ];
    for (const path of [...orphans, ...kept]) await writeFile(path, "x");
    const child = spawn(process.execPath, [BIN.pathname], {
      env: { PATH: process.env.PATH, CRM_DATA_DIR: dataDir, CRM_LOG_LEVEL: "warn" },
      stdio: ["pipe", "ignore", "ignore"],
    });
    try {
      await waitUntil(
        () => orphans.every((p) => !existsSync(p)),
        "the server's start-up sweep of orphaned temp files",
        { timeoutMs: 20_000, intervalMs: 50 },
      );
      expect((await readdir(exportsDir)).sort()).toEqual(
        kept.map((p) => p.slice(exportsDir.length + 1)).sort(),
      );
      expect(child.exitCode).toBeNull();
    } finally {
      child.kill("SIGKILL");
    }
  });
});
