import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { summarizeFile } from "../../../src/analysis/index.js";
import type { CsvShape } from "../../../src/sandbox/csv-shape.js";
import { type SelectedRound, writeCampaignCsv } from "../../../src/sandbox/csv-writer.js";
import { createWorld } from "../../../src/sandbox/world/index.js";
import type { SandboxCampaign } from "../../../src/sandbox/world/types.js";

// The summary of one export is the same whatever shape the sandbox writes it in: rows by round,
// by time within a task (groups interleaved) or across the file, IDs spelled another way.
const dir = await mkdtemp(join(tmpdir(), "campaign-shapes-test-"));
afterAll(() => rm(dir, { recursive: true, force: true }));

const w = createWorld({ seed: 7, now: Date.parse("2026-11-20T03:00:00Z") });

async function summaryOf(campaign: SandboxCampaign, shape: CsvShape, name: string) {
  const rounds: SelectedRound[] = campaign.tasks
    .filter((t) => t.aggregated)
    .slice(0, 15)
    .flatMap((task) => task.rounds.map((round) => ({ task, round })));
  const path = join(dir, `${name}.csv`);
  await writeCampaignCsv(w, rounds, path, 540, undefined, shape);
  const { file: _file, ...figures } = await summarizeFile(path);
  return figures;
}

describe("campaign summary across export shapes", () => {
  it("is identical across row orders and ID spellings", async () => {
    for (const campaign of w.campaigns.filter((c) => c.is_ab_test && c.role === "normal")) {
      const own = await summaryOf(campaign, {}, `${campaign._id}-own`);
      expect(own.kind).toBe("campaign_event_data");
      for (const shape of [
        { order: "time-in-round" },
        { order: "time" },
        { order: "time", platformIds: "hex24", customerIds: "email" },
      ] as const) {
        const other = await summaryOf(campaign, shape, `${campaign._id}-${shape.order}`);
        expect(other).toEqual(own);
      }
    }
  });
});
