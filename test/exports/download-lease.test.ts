import { spawn } from "node:child_process";
import { hostname } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { leaseHolderGone } from "../../src/exports/download-lease.js";
import { type Harness, openLedger, startHarness } from "../helpers/tool-harness.js";

/** The PID of a process of this machine that ran and has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  const pid = child.pid as number;
  await new Promise((resolve) => child.once("exit", resolve));
  return pid;
}

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe("a download lease left by a process killed mid-download", () => {
  it("judges holders: gone only for a process of this machine that no longer runs", async () => {
    const pid = await deadPid();
    expect(leaseHolderGone(`${hostname()}:${pid}:ab12cd34`)).toBe(true);
    expect(leaseHolderGone(`${hostname()}:${process.pid}:ab12cd34`)).toBe(false);
    expect(leaseHolderGone(`${hostname()}:${process.ppid}:ab12cd34`)).toBe(false);
    expect(leaseHolderGone(`another-host.example:${pid}:ab12cd34`)).toBe(false);
    expect(leaseHolderGone("not a holder")).toBe(false);
  });

  it("does not hold up the download: the file comes at once, not when the lease expires", async () => {
    const campaign = h.sandbox.campaign_ids[0] as string;
    const started = await h.call("start_export", {
      type: "campaign_event_data",
      campaign_id: campaign,
      from: "2026-11-01",
      to: "2026-11-07",
      wait_seconds: 0,
    });
    expect(started.isError, started.text).toBeFalsy();
    const jobId = (started.structured.job as { _id: string })._id;
    // A server process on this machine took the job's lease and was killed (kill -9) before it
    // could release it: its lease would run for another minute.
    const ledger = openLedger(h, () => h.runtime.now());
    expect(
      await ledger.acquireDownloadLease(jobId, `${hostname()}:${await deadPid()}:0badf00d`, 60_000),
    ).toBe(true);
    await ledger.close();
    const checked = await h.call("check_export", { job_id: jobId, wait_seconds: 15 });
    expect(checked.isError, checked.text).toBeFalsy();
    expect(checked.structured.file_path, checked.text).toEqual(expect.any(String));
  }, 30_000);
});
