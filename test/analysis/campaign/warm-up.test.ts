import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { campaignRows, toCsv } from "./fixture.js";

/**
 * The warm-up runs once per thread, so each test takes a module graph of its own (the summary's
 * other tests may have warmed this process's already).
 */
async function freshModules() {
  vi.resetModules();
  const warmUp = await import("../../../src/analysis/campaign/warm-up.js");
  const summary = await import("../../../src/analysis/campaign/summary.js");
  const result = await import("../../../src/analysis/campaign/result.js");
  return { ...warmUp, ...summary, ...result };
}

let dir: string;
let sampleFile: string;
let otherFile: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "warm-up-"));
  const { warmUpSample } = await freshModules();
  sampleFile = join(dir, "sample.csv");
  await writeFile(sampleFile, warmUpSample());
  otherFile = join(dir, "other.csv");
  await writeFile(otherFile, toCsv(campaignRows(7)));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  vi.resetModules();
});

describe("warmUpRowPass", () => {
  it("tallies its sample, read in small slices and pieces, as the summary reads it from a file", async () => {
    const m = await freshModules();
    const bytes = m.warmUpSample().length;
    const expected = await m.summarizeCampaignCsv(sampleFile, bytes, {
      conversionEventType: "purchase",
      threads: 1,
    });
    const tallies = m.warmUpRowPass("purchase");
    expect(tallies).toHaveLength(3);
    const file = { path: sampleFile, bytes, conversionType: "purchase", timeZone: "Asia/Seoul" };
    for (const t of tallies) expect(m.campaignResult(t, file)).toEqual(expected);
  });

  it("takes the paths a real export takes: quoted ids, failures, two currencies, control, unknown users", async () => {
    const m = await freshModules();
    const r = await m.summarizeCampaignCsv(sampleFile, m.warmUpSample().length, {
      conversionEventType: "purchase",
      threads: 1,
    });
    expect(new Set(r.rounds.map((x) => x.task_id))).toEqual(new Set(["tsk_a", 'tsk_"b"']));
    expect(new Set(r.rounds.map((x) => x.group)).size).toBeGreaterThan(1);
    expect(r.error_codes.length).toBeGreaterThan(1);
    expect(r.revenue.by_currency.map((c) => c.currency).sort()).toEqual(["KRW", "USD"]);
    expect(r.warnings).toEqual([]);
  });

  it("runs once per thread: a second call reads nothing", async () => {
    const m = await freshModules();
    expect(m.warmUpRowPass(undefined)).toHaveLength(3);
    expect(m.warmUpRowPass(undefined)).toEqual([]);
  });

  it("leaves no trace in the summaries read after it", async () => {
    const m = await freshModules();
    const bytes = (await import("node:fs")).statSync(otherFile).size;
    const before = await m.summarizeCampaignCsv(otherFile, bytes, { threads: 1 });
    m.warmUpRowPass("purchase");
    expect(await m.summarizeCampaignCsv(otherFile, bytes, { threads: 1 })).toEqual(before);
  });
});
