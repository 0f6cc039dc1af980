import { afterEach, describe, expect, it } from "vitest";
import type {
  CampaignExportRecord,
  EventsPartition,
  ScenarioExportRecord,
  ScenarioPartition,
} from "../../src/history/catalogue.js";
import { CatalogueConflictError } from "../../src/history/errors.js";
import type { CatalogueStore } from "../../src/history/store.js";

/**
 * The behaviour every catalogue store must have (the JSON file, PostgreSQL). `open(scope)` gives
 * a store on the same shared state each time it is called with that scope, as a second process
 * would open it; each test uses scopes of its own.
 */
export interface CatalogueFixture {
  open(scope: string): CatalogueStore;
}

export const campaignRecord: CampaignExportRecord = {
  kind: "campaign_event_data",
  job_id: "job-1",
  job_created_at: "2026-11-10T00:00:00.000Z",
  window: { from: "2026-10-01T00:00:00.000Z", to: null },
  ingested_at: "2026-11-10T00:05:00.000Z",
  source: { path: "/data/exports/job-1.csv", bytes: 1234 },
  rows: 10,
  campaign_id: "camp-1",
  campaign_name: "가을 세일",
  channels: ["app_push"],
  rounds: [{ task_id: "t1", scheduled_at: "2026-10-05 09:00:00", group: null, rows: 10 }],
};

export const scenarioRecord: ScenarioExportRecord = {
  kind: "scenario_daily_metrics",
  job_id: "job-2",
  job_created_at: "2026-11-11T00:00:00.000Z",
  window: { from: "2026-10-01T00:00:00.000Z", to: "2026-10-31T00:00:00.000Z" },
  ingested_at: "2026-11-11T00:05:00.000Z",
  source: { path: "/data/exports/job-2.xlsx", bytes: 999 },
  rows: 62,
  scenario_id: "sc-1",
  nodes: 2,
  first_date: "2026-10-01",
  last_date: "2026-10-31",
};

export const eventsPartition: EventsPartition = {
  dataset: "events",
  dir: "events/campaign_id=camp-1/round_month=2026-10",
  file: "events/campaign_id=camp-1/round_month=2026-10/part-1-aaaaaaaaaaaa.parquet",
  rows: 10,
  bytes: 2000,
  campaign_id: "camp-1",
  round_month: "2026-10",
  rounds: [
    { task_id: "t1", scheduled_at: "2026-10-05 09:00:00", group: null, rows: 10, job_id: "job-1" },
  ],
};

export const scenarioPartition: ScenarioPartition = {
  dataset: "scenario_days",
  dir: "scenario_days/scenario_id=sc-1",
  file: "scenario_days/scenario_id=sc-1/part-2-bbbbbbbbbbbb.parquet",
  rows: 62,
  bytes: 3000,
  scenario_id: "sc-1",
  jobs: ["job-2"],
  first_date: "2026-10-01",
  last_date: "2026-10-31",
};

export function describeCatalogueStore(name: string, fixture: CatalogueFixture): void {
  describe(`${name} catalogue store`, () => {
    const opened: CatalogueStore[] = [];
    let n = 0;
    const scope = () => `scope-${process.pid}-${n++}`;
    const open = (s: string) => {
      const store = fixture.open(s);
      opened.push(store);
      return store;
    };
    afterEach(async () => {
      for (const store of opened.splice(0)) await store.close();
    });

    it("starts empty at generation 0", async () => {
      expect(await open(scope()).read()).toEqual({ generation: 0, exports: [], partitions: [] });
    });

    it("commits puts and drops in one step, seen by another store on the same state", async () => {
      const s = scope();
      const first = open(s);
      const after = await first.commit(0, {
        putExports: [campaignRecord, scenarioRecord],
        putPartitions: [eventsPartition, scenarioPartition],
      });
      expect(after.generation).toBe(1);
      const second = open(s);
      const read = await second.read();
      expect(read.generation).toBe(1);
      expect(read.exports).toEqual([campaignRecord, scenarioRecord]);
      expect(read.partitions).toEqual([eventsPartition, scenarioPartition]);
      const replaced = {
        ...eventsPartition,
        file: "events/x/part-2-cccccccccccc.parquet",
        rows: 7,
      };
      const third = await second.commit(1, {
        putPartitions: [replaced],
        dropPartitions: [scenarioPartition.dir],
        putExports: [{ ...campaignRecord, rounds: [] }],
      });
      expect(third.generation).toBe(2);
      expect(await first.read()).toEqual({
        generation: 2,
        exports: [{ ...campaignRecord, rounds: [] }, scenarioRecord],
        partitions: [replaced],
      });
    });

    it("refuses a commit planned on an older generation, changing nothing", async () => {
      const s = scope();
      const a = open(s);
      const b = open(s);
      await a.commit(0, { putExports: [campaignRecord] });
      await expect(b.commit(0, { putExports: [scenarioRecord] })).rejects.toBeInstanceOf(
        CatalogueConflictError,
      );
      expect(await b.read()).toMatchObject({ generation: 1, exports: [campaignRecord] });
    });

    it("keeps each scope apart", async () => {
      const a = open(scope());
      const b = open(scope());
      await a.commit(0, { putExports: [campaignRecord], putPartitions: [eventsPartition] });
      expect(await b.read()).toEqual({ generation: 0, exports: [], partitions: [] });
    });
  });
}
