import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summarizeFile } from "../../src/analysis/index.js";
import type { CampaignSummary } from "../../src/analysis/schemas.js";
import { MAX_FAILURE_CODES, MAX_ROUNDS_CHARTED } from "../../src/report/campaign-report.js";
import { MAX_CAMPAIGNS_CHARTED } from "../../src/report/metrics-report.js";
import { buildReport, type ReportModel } from "../../src/report/model.js";
import { MANY_CODES, MANY_SENDS, writeManyRoundsCsv } from "./fixtures.js";

/**
 * What a chart leaves out, said truly where the page is: a file has no tool result beside it, so
 * it names the command that prints everything; the App view points to the tool result.
 */

let dir: string;
let campaign: CampaignSummary;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "report-left-out-"));
  const summary = await summarizeFile(await writeManyRoundsCsv(dir));
  if (summary.kind !== "campaign_event_data") throw new Error("not summarized as a campaign");
  campaign = summary;
});
afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

function note(model: ReportModel, id: string): string | undefined {
  return model.sections.flatMap((s) => s.charts).find((c) => c.id === id)?.note;
}

describe("what the report does not draw", () => {
  it("a file names the command that prints it; the view names the tool result", () => {
    expect(campaign.rounds).toHaveLength(2 * MANY_SENDS);
    const hidden = 2 * MANY_SENDS - MAX_ROUNDS_CHARTED;
    const rounds = `Not drawn: the earlier ${hidden} round-and-group rows of ${hidden / 2} send rounds;`;
    const codes = `Not drawn: ${MANY_CODES - MAX_FAILURE_CODES} more error codes;`;
    const file = buildReport(campaign, "file");
    expect(note(file, "funnel")).toBe(
      `${rounds} \`crm-insights-mcp summarize --json\` on the export prints them all.`,
    );
    expect(note(file, "failures-by-code")).toBe(
      `${codes} \`crm-insights-mcp summarize --json\` on the export prints them all.`,
    );
    const view = buildReport(campaign, "view");
    expect(note(view, "funnel")).toBe(`${rounds} the tool result has them all.`);
    expect(note(view, "failures-by-code")).toBe(`${codes} the tool result has them all.`);
    for (const model of [file, view])
      expect(JSON.stringify(model)).not.toContain("structuredContent");
  });

  it("campaign_metrics: more campaigns than charted", () => {
    const sums = {
      task_count: 1,
      sent_count: 100,
      received_count: 90,
      open_count: 30,
      click_count: 1,
      purchase_count: 2,
      revenue: {},
      cost: {},
      computed_open_rate: 0.33,
      computed_conversion_rate: 0.06,
    };
    const campaigns = Array.from({ length: MAX_CAMPAIGNS_CHARTED + 3 }, (_, i) => ({
      ...sums,
      _id: `cmp_${i}`,
      name: `캠페인 ${i}`,
      schedule_type: "once",
      is_ab_test: false,
    }));
    const data = { campaigns, totals: sums, more_not_shown: 0 };
    expect(note(buildReport(data, "view"), "campaign-volume")).toBe(
      "Not drawn: 3 more campaigns; the tool result has them all.",
    );
    expect(note(buildReport(data, "file"), "campaign-volume")).not.toContain("structuredContent");
  });
});
