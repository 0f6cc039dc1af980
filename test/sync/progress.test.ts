import { describe, expect, it, vi } from "vitest";
import { barProgress, type ExportItem, lineProgress } from "../../src/sync/progress.js";

const item: ExportItem = {
  campaign: { id: "cmp_a", name: "A", rounds: [] },
  from: "2026-11-01",
  to: "2026-11-03",
  missing: 3,
};

describe("sync's progress on stderr", () => {
  it("writes one line per export and per note when not on a terminal", () => {
    const out: string[] = [];
    const progress = lineProgress((t) => out.push(t));
    progress.planned(1, 1);
    progress.step(item, "processing", 0.5);
    progress.note("waiting until 2026-11-22T00:10:00Z (600 s) for the next slot");
    progress.done(item, "job j1 (created): 3 round(s) and 10 row(s) added");
    progress.close();
    expect(out).toEqual([
      "sync: 1 campaign(s) with rounds in the window; 1 export(s) to make or reuse\n",
      "sync: waiting until 2026-11-22T00:10:00Z (600 s) for the next slot\n",
      "sync: [1/1] cmp_a 2026-11-01..2026-11-03: job j1 (created): 3 round(s) and 10 row(s) added\n",
    ]);
  });

  it("on a terminal draws a bar per export under way and one for the run, redrawn in place", () => {
    vi.useFakeTimers();
    try {
      let screen = "";
      const write = (t: string) => {
        screen += t;
      };
      const progress = barProgress(
        write,
        () => 120,
        () => 0,
      );
      progress.planned(2, 1);
      progress.step(item, "downloading", 0.5);
      vi.advanceTimersByTime(100);
      expect(screen).toContain(
        "[############------------] cmp_a 2026-11-01..2026-11-03  downloading (0s)\n",
      );
      expect(screen).toContain("[------------------------] sync: 0 of 2 export(s) done\n");
      progress.done(item, "added");
      expect(screen).toContain("sync: cmp_a 2026-11-01..2026-11-03: added\n");
      expect(screen).toContain("[############------------] sync: 1 of 2 export(s) done\n");
      // Each redraw first moves up over the lines it drew and clears them.
      expect(screen).toContain(`${ESC}[2F${ESC}[J`);
      progress.close();
    } finally {
      vi.useRealTimers();
    }
  });
});

const ESC = String.fromCharCode(27);
