import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderSummaryMarkdown, summarizeFile } from "../../../src/analysis/index.js";
import { eventRow, HEADER, toCsv } from "./fixture.js";

/** The short text's "Not shown" line counts the round table's rows as what they are. */

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rounds-left-"));
});
afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** `sends` send rounds, each sent to every group of `groups`, one user a group. */
async function exportOf(name: string, sends: number, groups: string[]): Promise<string> {
  const rows = [HEADER];
  for (let i = 0; i < sends; i++) {
    const scheduled = `2025-03-${String(i + 1).padStart(2, "0")} 10:00:00`;
    for (const group of groups) {
      const round = { task: "task-1", scheduled, group, userId: `u-${group}`, at: scheduled };
      rows.push(eventRow({ ...round, event: "message_sent" }));
      rows.push(eventRow({ ...round, event: "message_received" }));
    }
  }
  const file = join(dir, name);
  await writeFile(file, toCsv(rows));
  return file;
}

describe("rounds left out of the short text", () => {
  it("an A/B export's rows are counted as round-and-group rows of so many send rounds", async () => {
    const summary = await summarizeFile(await exportOf("ab.csv", 12, ["그룹A", "그룹B"]));
    expect(summary.kind === "campaign_event_data" && summary.rounds).toHaveLength(24);
    const text = renderSummaryMarkdown(summary);
    expect(text).toContain("12 send rounds (2 groups)");
    // 8 rows are drawn: those of 4 send rounds; 16 rows of the other 8 are left out.
    expect(text).toContain("_Not shown: 16 round-and-group rows of 8 send rounds;");
    expect(text).not.toMatch(/round\(s\)/);
  });

  it("says where the rest is as the reader asks for it: the tool's arguments, or the command's flags", async () => {
    const summary = await summarizeFile(await exportOf("ab-reader.csv", 12, ["그룹A", "그룹B"]));
    expect(renderSummaryMarkdown(summary)).toContain(
      "; ask with detail for more, or see the structured result for every figure._",
    );
    const command = renderSummaryMarkdown(summary, { reader: "command" });
    expect(command).toContain(
      "; run again with --detail for more, or see --json for every figure._",
    );
    expect(command).not.toContain("structured result");
    const whole = renderSummaryMarkdown(summary, { reader: "command", detail: true });
    expect(whole).toContain("_Nothing left out; --json has every figure._");
  });

  it("an export of one group a round counts send rounds", async () => {
    const text = renderSummaryMarkdown(await summarizeFile(await exportOf("one.csv", 9, [""])));
    expect(text).toContain("_Not shown: 1 send round;");
  });
});
