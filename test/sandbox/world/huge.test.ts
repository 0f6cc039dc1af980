import { describe, expect, it } from "vitest";
import type { SandboxTask } from "../../../src/sandbox/world/types.js";
import { campaignWithRole, world } from "./fixtures.js";

// Its speed and memory are measured by bench/world-stream.mjs, not here.
describe("huge campaign streaming", () => {
  it("streams every row of one ~110,000-send round, agreeing with the task's metrics", () => {
    const w = world();
    const huge = campaignWithRole(w, "huge_sends");
    const task = huge.tasks[huge.tasks.length - 1] as SandboxTask;
    const round = task.rounds[0];
    if (round === undefined) throw new Error("no round");
    let rows = 0;
    let sent = 0;
    let bytes = 0;
    for (const row of w.roundRows(task, round)) {
      rows++;
      if (row.event_type === "message_sent") sent++;
      bytes += row.platform_user_id.length + row.event_properties.length;
    }
    expect(sent).toBe(round.records);
    expect(rows).toBeGreaterThan(2 * round.records);
    expect(bytes).toBeGreaterThan(0);
    expect(w.taskMetrics(task).sent_count).toBe(sent);
  });
});
