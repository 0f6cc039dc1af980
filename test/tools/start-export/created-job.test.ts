import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { must } from "../../helpers/must.js";
import { type Harness, startHarness } from "../../helpers/tool-harness.js";

// A created job's ID must never be lost: the user would retry with force and create another.
let h: Harness;
let scenarioId: string;
beforeAll(async () => {
  h = await startHarness({ env: { CRM_EXPORT_BUDGET: "10/600" } });
  scenarioId = must(h.sandbox.world.scenarios[0]?._id, "scenario");
});
afterAll(async () => {
  await h?.close();
});

const scenarioArgs = (day: string, extra: Record<string, unknown> = {}) => ({
  type: "scenario_daily_metrics",
  scenario_id: scenarioId,
  from: day,
  to: day,
  ...extra,
});
const creates = () => h.sandbox.faults.requestCounts.create_export_job;

describe("a failed first poll after a create keeps the new job's ID", () => {
  it.each([
    ["a 400", { type: "status", status: 400, body: '{"message":"bad request"}' }],
    ["a cut-off 200 body", { type: "garble", body: '{"_id":"exp_' }],
    ["a 200 body that is not JSON", { type: "garble", body: "<html>gateway</html>" }],
  ] as const)(
    "%s: the result names the job and the check_export call, never force",
    async (_name, action) => {
      const before = creates();
      h.sandbox.faults.inject({ operation: "get_export_job", action, times: 1000 });
      let r: Awaited<ReturnType<Harness["call"]>>;
      try {
        r = await h.call(
          "start_export",
          scenarioArgs("2026-10-07", { wait_seconds: 2, force: true }),
        );
      } finally {
        h.sandbox.faults.clear();
      }
      expect(creates()).toBe(before + 1);
      expect(r.isError).toBeFalsy();
      const id = (r.structured.job as { _id: string })._id;
      expect(id).toMatch(/^[0-9a-f]{24}$/);
      expect(r.structured.next_step).toBe(`check_export {"job_id":"${id}","wait_seconds":30}`);
      expect(String(r.structured.error)).toContain(`check_export {"job_id":"${id}"}`);
      expect(String(r.structured.error)).toContain("do not create another job");
      expect(r.text).toContain(id);
      expect(r.text).not.toMatch(/force/);
      // The job is intact: the call the result names finishes it without a new job.
      const done = await h.call("check_export", { job_id: id, wait_seconds: 10 });
      expect(done.isError).toBeFalsy();
      expect(String(done.structured.file_path)).toMatch(/\.xlsx$/);
      expect(creates()).toBe(before + 1);
    },
  );

  it("a create answered 200 with a body that is not JSON says the job probably exists and not to retry blindly", async () => {
    const before = creates();
    h.sandbox.faults.inject({
      operation: "create_export_job",
      action: { type: "garble", body: "<html>oops</html>" },
    });
    const r = await h.call("start_export", scenarioArgs("2026-10-08", { wait_seconds: 0 }));
    h.sandbox.faults.clear();
    // The service did create it.
    expect(creates()).toBe(before + 1);
    expect(r.isError).toBe(true);
    expect(r.text).toContain("most likely created");
    expect(r.text).toContain("Do not call start_export again");
    expect(r.text).toContain("check_export without job_id");
    expect(r.text).not.toMatch(/Retry shortly|force/);
  });
});

describe("identical start_export calls at once", () => {
  it("create one job: the second waits for the first's create and joins its job", async () => {
    const before = creates();
    const args = scenarioArgs("2026-10-09", { wait_seconds: 0 });
    const [a, b, c] = await Promise.all([
      h.call("start_export", args),
      h.call("start_export", args),
      h.call("start_export", args),
    ]);
    expect(creates()).toBe(before + 1);
    const ids = [a, b, c].map((r) => (r?.structured.job as { _id?: string } | undefined)?._id);
    expect(ids[0]).toBeTypeOf("string");
    expect(new Set(ids).size).toBe(1);
    expect([a, b, c].filter((r) => r?.structured.reused === true)).toHaveLength(2);
  });
});
