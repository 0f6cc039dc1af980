import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { roleOf } from "../../src/analysis/event-roles.js";
import { loadConfig } from "../../src/config.js";
import { dataFolderInUse } from "../../src/files/data-folder.js";
import { openHistory } from "../../src/history/index.js";
import { configLedgerScope } from "../../src/runtime.js";
import { writeCampaignCsv } from "../../src/sandbox/csv-writer.js";
import { createWorld } from "../../src/sandbox/world/index.js";
import type { SandboxCampaign } from "../../src/sandbox/world/types.js";
import { must } from "../helpers/must.js";
import { type Run, runQueryBin } from "../helpers/run-query-bin.js";

/**
 * `crm-insights-mcp query --history` (the built bin, dist/cli.js) over the history of a data
 * folder in sandbox mode (CRM_BASE_URL unset), as the server keeps it: two campaigns' exports
 * added, then questions across them, answered as the files themselves count (csv-parse).
 */

const BIN = join(import.meta.dirname, "../../dist/cli.js");
const NOW = Date.parse("2026-11-20T03:00:00Z");
const world = createWorld({ seed: 7, now: NOW });

let dir: string;
let empty: string;
const campaigns: { campaign: SandboxCampaign; rows: string[][] }[] = [];

function query(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return runQueryBin(BIN, ["--history", ...args], { CRM_DATA_DIR: dir, ...env }, 60_000);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "query-history-"));
  empty = await mkdtemp(join(tmpdir(), "query-history-empty-"));
  const config = loadConfig({ CRM_DATA_DIR: dir });
  const history = must(
    openHistory(config, dataFolderInUse(config), configLedgerScope(config), { now: () => NOW }),
    "the history (on by default)",
  );
  try {
    const chosen = world.campaigns
      .filter((c) => c.role === "normal" && c.tasks.length === 1 && c.tasks[0]?.aggregated)
      .slice(0, 2);
    for (const [i, campaign] of chosen.entries()) {
      const path = join(dir, `${campaign._id}.csv`);
      const rounds = must(campaign.tasks[0], "its round").rounds.map((round) => ({
        task: must(campaign.tasks[0], "its round"),
        round,
      }));
      await writeCampaignCsv(world, rounds, path, 540);
      await history.ingestCampaignExport({
        path,
        jobId: `job-${i}`,
        campaignId: campaign._id,
        campaignName: campaign.name,
        window: {},
        jobCreatedAt: new Date(NOW).toISOString(),
      });
      const rows = parse(await readFile(path), { from_line: 2 }) as string[][];
      campaigns.push({ campaign, rows });
    }
  } finally {
    await history.close();
  }
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await rm(empty, { recursive: true, force: true });
});

/** Users (platform_user_id, else user_id) with a received row, per campaign. */
function reached(rows: string[][]): Set<string> {
  const users = new Set<string>();
  for (const r of rows) {
    const user = (r[5] || r[4]) as string;
    if (user !== "" && roleOf(r[3] as string, undefined) === "received") users.add(user);
  }
  return users;
}

describe("crm-insights-mcp query --history", () => {
  it("answers a question across the campaigns it holds, as the files count", async () => {
    const run = await query([
      "--json",
      "--sql",
      "SELECT campaign_id, count(*) AS rows, count(DISTINCT coalesce(platform_user_id, user_id)) FILTER (WHERE event_role = 'received') AS reached FROM history GROUP BY 1 ORDER BY 1",
    ]);
    expect(run.code, run.stderr).toBe(0);
    const answer = JSON.parse(run.stdout) as { rows: unknown[][]; row_count: number };
    expect(campaigns).toHaveLength(2);
    expect(answer.rows).toEqual(
      [...campaigns]
        .sort((a, b) => (a.campaign._id < b.campaign._id ? -1 : 1))
        .map(({ campaign, rows }) => [campaign._id, rows.length, reached(rows).size]),
    );
  });

  it("counts the users both campaigns reached", async () => {
    const [a, b] = campaigns.map(({ rows }) => reached(rows)) as [Set<string>, Set<string>];
    const both = [...a].filter((u) => b.has(u)).length;
    const run = await query([
      "--json",
      "--sql",
      "WITH r AS (SELECT DISTINCT campaign_id, coalesce(platform_user_id, user_id) AS who FROM history WHERE event_role = 'received') SELECT count(*) AS reached_by_both FROM r x JOIN r y ON x.who = y.who AND x.campaign_id < y.campaign_id",
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(both).toBeGreaterThan(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ rows: [[both]] });
  });

  it("writes the answer as a page with --report", async () => {
    const out = join(dir, "campaigns.html");
    const run = await query([
      "--sql",
      "SELECT name, rows FROM history_campaigns ORDER BY 1",
      "--report",
      out,
      "--lang",
      "en",
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("Wrote ");
    const html = await readFile(out, "utf8");
    for (const { campaign } of campaigns) expect(html).toContain(campaign.name);
  });

  it("says the history is empty, and how to fill it, when it holds nothing", async () => {
    const run = await query(["--json", "--sql", "SELECT count(*) AS n FROM history"], {
      CRM_DATA_DIR: empty,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ rows: [[0]], row_count: 1 });
    expect(run.stderr).toContain("holds no export yet");
    expect(run.stderr).toContain("crm-insights-mcp sync");
  });

  it("with CRM_HISTORY=off, exits 1 saying so", async () => {
    const run = await query(["--sql", "SELECT 1"], { CRM_HISTORY: "off" });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("CRM_HISTORY=off");
    expect(run.stdout).toBe("");
  });

  it("refuses what query_export refuses", async () => {
    const run = await query(["--sql", "COPY (SELECT * FROM history) TO 'copy.csv'"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^crm-insights-mcp query: /);
    const none = await runQueryBin(BIN, ["--sql", "SELECT 1"], { CRM_DATA_DIR: dir });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("Give at least one export file, or --history.");
  });
});
