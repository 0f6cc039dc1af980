import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExportJob } from "../../../src/api/schemas.js";
import { must } from "../../helpers/must.js";
import { type Harness, startHarness } from "../../helpers/tool-harness.js";
import { waitUntil } from "../../helpers/wait-until.js";

/**
 * An identical start_export while the job finishes: the call looks for a finished job, then for a
 * running one; another call's poll can record the job completed in between (seen once in about
 * 15 soak runs, which then created a second job). The interleaving is forced here by recording
 * the completion right after the first look.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { CRM_EXPORT_BUDGET: "6/600" } });
});
afterAll(async () => {
  await h?.close();
});

describe("start_export while another call finishes the identical job", () => {
  it("reuses the job that completed between its looks at the ledger instead of creating one", async () => {
    const scenarioId = must(h.sandbox.world.scenarios[0]?._id, "scenario");
    const args = {
      type: "scenario_daily_metrics",
      scenario_id: scenarioId,
      from: "2026-11-08",
      to: "2026-11-21",
      wait_seconds: 0,
    };
    const first = await h.call("start_export", args);
    const job = first.structured.job as ExportJob;
    expect(job.status).not.toBe("completed");
    // The service finishes it; the server has not polled it since (the ledger says running).
    const api = await h.runtime.api();
    let done = await api.getExportJob(job._id, {});
    await waitUntil(
      async () => {
        done = await api.getExportJob(job._id, {});
        return done.status === "completed";
      },
      "the service to complete the job",
      { intervalMs: 100 },
    );

    const ledger = h.runtime.ledger;
    const original = ledger.findReusable.bind(ledger);
    let raced = false;
    ledger.findReusable = async (key, options) => {
      const found = await original(key, options);
      if (!raced) {
        raced = true;
        await ledger.updateJob(done);
      }
      return found;
    };
    const creates = h.sandbox.faults.requestCounts.create_export_job;
    try {
      const again = await h.call("start_export", args);
      expect(raced).toBe(true);
      expect(again.isError).toBeFalsy();
      expect(again.structured.reused).toBe(true);
      expect((again.structured.job as ExportJob)._id).toBe(job._id);
      expect(h.sandbox.faults.requestCounts.create_export_job).toBe(creates);
    } finally {
      ledger.findReusable = original;
    }
  });
});
