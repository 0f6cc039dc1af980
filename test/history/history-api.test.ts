import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ExportJob } from "../../src/api/schemas.js";
import type { CatalogueChange, HistoryCatalogue } from "../../src/history/catalogue.js";
import { HistoryError } from "../../src/history/errors.js";
import { queryHistory } from "../../src/history/query.js";
import type { CatalogueStore } from "../../src/history/store.js";
import type { LedgerEntry } from "../../src/ledger/store.js";
import { loadDuckDb } from "../../src/query/engine.js";
import { QueryError } from "../../src/query/errors.js";
import { type HistoryFixture, historyFixture, userRows, writeCampaignCsv } from "./fixtures.js";

const LIMITS = { memoryMb: 256, threads: 1, timeoutSeconds: 60 };
const OCT = { task: "t-oct", at: "2026-10-05 09:00:00" };

let f: HistoryFixture;
beforeAll(async () => {
  await loadDuckDb();
});
beforeEach(async () => {
  f = await historyFixture();
});
afterEach(async () => {
  await f.close();
});

/** A ledger entry of a completed campaign export whose file is `path`. */
function entry(jobId: string, path: string | undefined, created: string): LedgerEntry {
  const job: ExportJob = {
    _id: jobId,
    application_id: "app",
    type: "campaign_event_data",
    status: "completed",
    campaign_id: "camp-9",
    from: "2026-10-01T00:00:00.000Z",
    file_name: jobId,
    file_ext: "csv",
    file_size: 1,
    download_url: "https://files.example.com/x",
    download_url_expires_at: "2026-11-11T00:00:00.000Z",
    created_at: created,
    updated_at: created,
  };
  return {
    job_id: jobId,
    request: { type: "campaign_event_data", campaign_id: "camp-9", from: "2026-10-01T00:00:00Z" },
    request_key: `key-${jobId}`,
    requested_at: created,
    status: "completed",
    history: [{ status: "completed", at: created }],
    job,
    ...(path === undefined ? {} : { file_path: path, file_bytes: 1 }),
  };
}

function count(sql = "SELECT job_id, count(*) FROM history GROUP BY 1 ORDER BY 1") {
  return queryHistory(f.history, { sql, maxRows: 100, limits: LIMITS, spillParent: f.dir });
}

describe("adding the ledger's downloads", () => {
  it("ingestJob takes the campaign, window and creation time from the ledger entry", async () => {
    const path = await writeCampaignCsv(join(f.dir, "a.csv"), userRows(OCT, "1", ["message_sent"]));
    await f.history.ingestJob(entry("job-1", path, "2026-11-01T00:00:00.000Z"), {
      campaignName: "재방문 쿠폰",
    });
    const [record] = (await f.history.catalogue()).exports;
    expect(record).toMatchObject({
      job_id: "job-1",
      campaign_id: "camp-9",
      campaign_name: "재방문 쿠폰",
      window: { from: "2026-10-01T00:00:00.000Z", to: null },
      job_created_at: "2026-11-01T00:00:00.000Z",
    });
    await expect(
      f.history.ingestJob(entry("job-2", undefined, "2026-11-01T00:00:00Z")),
    ).rejects.toThrow(/has no downloaded file yet/);
  });

  it("catchUp adds what is missing, skips files that are gone, and reports each failure", async () => {
    const a = await writeCampaignCsv(join(f.dir, "a.csv"), userRows(OCT, "1", ["message_sent"]));
    const b = await writeCampaignCsv(join(f.dir, "b.csv"), userRows(OCT, "2", ["message_sent"]));
    const gone = await writeCampaignCsv(
      join(f.dir, "gone.csv"),
      userRows(OCT, "3", ["message_sent"]),
    );
    await rm(gone);
    const bad = join(f.dir, "bad.csv");
    await writeCampaignCsv(bad, [
      { ...userRows(OCT, "4", ["message_sent"])[0], captured_at: "soon" },
    ]);
    await f.history.ingestJob(entry("job-a", a, "2026-11-01T00:00:00Z"));
    const result = await f.history.catchUp([
      entry("job-a", a, "2026-11-01T00:00:00Z"),
      entry("job-b", b, "2026-11-02T00:00:00Z"),
      entry("job-gone", gone, "2026-11-03T00:00:00Z"),
      entry("job-bad", bad, "2026-11-04T00:00:00Z"),
    ]);
    expect(result.added).toEqual(["job-b"]);
    expect(result.failed.map((x) => x.job_id)).toEqual(["job-bad"]);
    expect(result.failed[0]?.error).toMatch(/captured_at field is not a valid time/);
    // job-b is newer and holds the same round: it alone gives it.
    expect((await count()).rows).toEqual([["job-b", 1]]);
  });

  it("nameCampaigns names a held campaign on its newest export, once, and skips the rest", async () => {
    const a = await writeCampaignCsv(join(f.dir, "a.csv"), userRows(OCT, "1", ["message_sent"]));
    const b = await writeCampaignCsv(join(f.dir, "b.csv"), userRows(OCT, "2", ["message_sent"]));
    await f.history.ingestJob(entry("job-a", a, "2026-11-01T00:00:00Z"), {
      campaignName: "옛 이름",
    });
    await f.history.ingestJob(entry("job-b", b, "2026-11-02T00:00:00Z"));
    expect((await f.history.campaigns())[0]?.name).toBe("옛 이름");

    const names = new Map([
      ["camp-9", "새 이름\n"],
      ["camp-not-held", "아무개"],
    ]);
    expect(await f.history.nameCampaigns(names)).toBe(1);
    const catalogue = await f.history.catalogue();
    const byJob = new Map(
      catalogue.exports.map((e) => [e.job_id, e.kind === "campaign_event_data" && e.campaign_name]),
    );
    expect(byJob).toEqual(
      new Map([
        ["job-a", "옛 이름"],
        ["job-b", "새 이름"],
      ]),
    );
    expect((await f.history.campaigns()).map((c) => [c.campaign_id, c.name])).toEqual([
      ["camp-9", "새 이름"],
    ]);
    // Named already: no commit at all.
    expect(await f.history.nameCampaigns(names)).toBe(0);
    expect((await f.history.catalogue()).generation).toBe(catalogue.generation);
  });

  it("concurrent calls for one job in one process share one ingestion", async () => {
    const path = await writeCampaignCsv(join(f.dir, "a.csv"), userRows(OCT, "1", ["message_sent"]));
    const e = entry("job-1", path, "2026-11-01T00:00:00Z");
    const [x, y] = await Promise.all([f.history.ingestJob(e), f.history.ingestJob(e)]);
    expect(x).toBe(y);
    expect(x.status).toBe("added");
  });
});

/** A store whose first read answers an older catalogue, as a reader that read it just before a commit. */
class StaleOnce implements CatalogueStore {
  readonly location = "stale";
  constructor(
    private readonly inner: CatalogueStore,
    private stale: HistoryCatalogue | undefined,
  ) {}
  async read(): Promise<HistoryCatalogue> {
    const old = this.stale;
    this.stale = undefined;
    return old ?? this.inner.read();
  }
  commit(generation: number, change: CatalogueChange): Promise<HistoryCatalogue> {
    return this.inner.commit(generation, change);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

describe("reading while another process commits", () => {
  it("a query that met a file a commit replaced reads again over the new catalogue", async () => {
    const first = await writeCampaignCsv(
      join(f.dir, "a.csv"),
      userRows(OCT, "1", ["message_sent"]),
    );
    await f.history.ingestCampaignExport({
      path: first,
      jobId: "job-1",
      campaignId: "c",
      window: {},
      jobCreatedAt: "2026-11-01T00:00:00Z",
    });
    const before = await f.history.catalogue();
    const second = await writeCampaignCsv(
      join(f.dir, "b.csv"),
      userRows(OCT, "2", ["message_sent"]),
    );
    await f.history.ingestCampaignExport({
      path: second,
      jobId: "job-2",
      campaignId: "c",
      window: {},
      jobCreatedAt: "2026-11-02T00:00:00Z",
    });
    const { FileCatalogueStore } = await import("../../src/history/catalogue-file.js");
    const { catalogueFilePath } = await import("../../src/history/layout.js");
    const reader = f.reopen(
      new StaleOnce(new FileCatalogueStore(catalogueFilePath(f.history.folder)), before),
    );
    const answer = await queryHistory(reader, {
      sql: "SELECT job_id, count(*) FROM history GROUP BY 1",
      maxRows: 10,
      limits: LIMITS,
      spillParent: f.dir,
    });
    expect(answer.rows).toEqual([["job-2", 1]]);
  });

  it("a file removed outside the server is a clear error, not a wrong answer", async () => {
    const path = await writeCampaignCsv(join(f.dir, "a.csv"), userRows(OCT, "1", ["message_sent"]));
    await f.history.ingestCampaignExport({
      path,
      jobId: "job-1",
      campaignId: "c",
      window: {},
      jobCreatedAt: "2026-11-01T00:00:00Z",
    });
    const [partition] = (await f.history.catalogue()).partitions;
    await rm(join(f.history.folder, partition?.file as string));
    const error = await count().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueryError);
    expect((error as QueryError).message).toMatch(/a file of the history is missing/);
    expect(error).not.toBeInstanceOf(HistoryError);
  });
});
