import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Check, runDoctor } from "../../src/doctor/doctor.js";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox } from "../../src/sandbox/types.js";

/**
 * doctor names the variable whose key it really sent: with CRM_RECOMMEND_SECRET_KEY unset the
 * recommend probe goes out with CRM_SECRET_KEY, and a refusal must say so.
 */

let sandbox: RunningSandbox;
let dataDir: string;
let remote: Record<string, string>;

beforeAll(async () => {
  // The export key and the recommend key differ, as the service's do.
  sandbox = await startSandbox({ jobSeconds: 0 });
  dataDir = await mkdtemp(join(tmpdir(), "crm-doctor-keys-"));
  remote = {
    CRM_BASE_URL: sandbox.base_url,
    CRM_APPLICATION_ID: sandbox.application_id,
    CRM_SECRET_KEY: sandbox.secret_key,
    CRM_DATA_DIR: dataDir,
  };
});
afterAll(async () => {
  await sandbox?.close();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

function check(checks: Check[], name: Check["name"]): Check | undefined {
  return checks.find((c) => c.name === name);
}

describe("doctor's recommend key", () => {
  it("unset: a refusal names CRM_SECRET_KEY, the key that was sent", async () => {
    const report = await runDoctor(remote, { probeTimeoutMs: 5_000 });
    expect(check(report.checks, "config")?.detail).toContain(
      "CRM_RECOMMEND_SECRET_KEY unset (CRM_SECRET_KEY used for recommend)",
    );
    expect(check(report.checks, "export/metrics key")?.ok).toBe(true);
    const recommend = check(report.checks, "recommend key");
    expect(recommend?.ok).toBe(false);
    expect(recommend?.detail).toContain("refused the key in CRM_SECRET_KEY for recommend");
    expect(recommend?.detail).toContain("set CRM_RECOMMEND_SECRET_KEY");
    expect(recommend?.detail).not.toContain("refused the key in CRM_RECOMMEND_SECRET_KEY");
  });

  it("set, even to the same key as CRM_SECRET_KEY: a refusal names CRM_RECOMMEND_SECRET_KEY", async () => {
    const report = await runDoctor(
      { ...remote, CRM_RECOMMEND_SECRET_KEY: sandbox.secret_key },
      { probeTimeoutMs: 5_000 },
    );
    expect(check(report.checks, "config")?.detail).not.toContain("unset");
    const recommend = check(report.checks, "recommend key");
    expect(recommend?.ok).toBe(false);
    expect(recommend?.detail).toContain(
      "refused the key in CRM_RECOMMEND_SECRET_KEY for recommend",
    );
  });

  it("set to the right key: accepted", async () => {
    const report = await runDoctor(
      { ...remote, CRM_RECOMMEND_SECRET_KEY: sandbox.recommend_secret_key },
      { probeTimeoutMs: 5_000 },
    );
    expect(report.ok, JSON.stringify(report.checks)).toBe(true);
  });
});
