import { describe, expect, it } from "vitest";
import type { SandboxTask } from "../../../src/sandbox/world/types.js";
import { campaignWithRole, world } from "./fixtures.js";

describe("huge campaign streaming", () => {
  it("streams one ~110,000-send round in bounded memory, fast", () => {
    const w = world();
    const huge = campaignWithRole(w, "huge_sends");
    const task = huge.tasks[huge.tasks.length - 1] as SandboxTask;
    const round = task.rounds[0];
    if (round === undefined) throw new Error("no round");
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    let rows = 0;
    let sent = 0;
    let bytes = 0;
    const started = performance.now();
    for (const row of w.roundRows(task, round)) {
      rows++;
      if (row.event_type === "message_sent") sent++;
      bytes += row.platform_user_id.length + row.event_properties.length;
      if ((rows & 0x3fff) === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
    }
    const seconds = (performance.now() - started) / 1000;
    expect(sent).toBe(round.records);
    expect(rows).toBeGreaterThan(2 * round.records);
    expect(bytes).toBeGreaterThan(0);
    // Retaining the ~240,000 row objects would take well over 60 MB.
    expect(peak - before).toBeLessThan(48 * 1024 * 1024);
    console.error(
      `huge round: ${rows} rows in ${seconds.toFixed(3)} s = ${Math.round(rows / seconds)} rows/s, peak heap growth ${((peak - before) / 1048576).toFixed(1)} MB`,
    );
    expect(w.taskMetrics(task).sent_count).toBe(sent);
  });
});
