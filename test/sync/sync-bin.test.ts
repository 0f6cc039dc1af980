import { execFile, spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createWorld } from "../../src/sandbox/world/index.js";
import type { SandboxCampaign } from "../../src/sandbox/world/types.js";
import { waitUntil } from "../helpers/wait-until.js";
import { childRunEnv } from "../setup/temp-folder.js";

/**
 * `sync` through the built bin in sandbox mode, as cron runs it: it adds a campaign's rounds to
 * the history, a second run creates nothing, a run killed with SIGKILL and started again creates
 * no job twice, and bad flags are refused by name.
 */
const BIN = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));
const NOW = "2026-11-22T09:00:00+09:00";
const DAY_MS = 86_400_000;

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "crm-sync-bin-"));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The file ledger's name (src/ledger/ledger.ts); nothing else in the folder. */
const LEDGER_FILE = /^export-jobs-[0-9a-f]{12}\.json$/;

function env(extra: Record<string, string> = {}): Record<string, string> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(
      (e): e is [string, string] => !e[0].startsWith("CRM_") && e[1] !== undefined,
    ),
  );
  return {
    ...clean,
    ...childRunEnv(),
    CRM_DATA_DIR: dataDir,
    CRM_SANDBOX_NOW: NOW,
    CRM_SANDBOX_JOB_SECONDS: "0",
    CRM_POLL_INTERVAL_SECONDS: "0.2",
    ...extra,
  };
}

function runSync(args: string[], extra: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, "sync", ...args],
      { env: env(extra), timeout: 120_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

interface Report {
  campaigns: number;
  exports_created: number;
  exports_reused: number;
  rounds_added: number;
  rows_added: number;
  waited_seconds: number;
  exports: { job_id?: string; status: string }[];
}

function report(run: Run): Report {
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Report;
}

/**
 * The sandbox's small campaigns (no A/B test, no role) with rounds aggregated in the default
 * window, the last 30 days up to the pinned today, and how many such rounds each has.
 */
function smallCampaigns(): { campaign: SandboxCampaign; rounds: number }[] {
  const now = Date.parse(NOW);
  const world = createWorld({ seed: 42, now });
  const kstMidnight = Math.floor((now + 9 * 3_600_000) / DAY_MS) * DAY_MS - 9 * 3_600_000;
  const from = kstMidnight - 29 * DAY_MS;
  return world.campaigns
    .filter((c) => c.role === "normal" && !c.is_ab_test)
    .map((campaign) => ({
      campaign,
      rounds: campaign.tasks.filter((t) => t.scheduled_at >= from && t.aggregated).length,
      records: campaign.tasks.reduce((n, t) => n + (t.rounds[0]?.records ?? 0), 0),
    }))
    .filter((c) => c.rounds > 0)
    .sort((a, b) => a.records - b.records);
}

async function sandboxJobsOf(campaignId: string): Promise<string[]> {
  const folder = join(dataDir, "sandbox", "service", "jobs", "sandbox-app");
  const names = await readdir(folder).catch(() => [] as string[]);
  const ids: string[] = [];
  for (const name of names.filter((n) => n.endsWith(".json"))) {
    const record = JSON.parse(await readFile(join(folder, name), "utf8")) as {
      id: string;
      campaignId?: string;
    };
    if (record.campaignId === campaignId) ids.push(record.id);
  }
  return ids;
}

/** The history's catalogue file (one in the data folder: sandbox mode's history). */
async function cataloguePath(): Promise<string> {
  const files = await readdir(dataDir, { recursive: true });
  const found = files.filter((f) => f.endsWith("catalogue.json"));
  expect(found).toHaveLength(1);
  return join(dataDir, found[0] as string);
}

type ExportRecord = { campaign_name?: string | null } & Record<string, unknown>;

async function rewriteCatalogue(change: (record: ExportRecord) => ExportRecord): Promise<void> {
  const path = await cataloguePath();
  const catalogue = JSON.parse(await readFile(path, "utf8")) as { exports: ExportRecord[] };
  await writeFile(path, JSON.stringify({ ...catalogue, exports: catalogue.exports.map(change) }));
}

/** The campaign names of the catalogue's export records. */
async function campaignNames(): Promise<(string | null | undefined)[]> {
  const catalogue = JSON.parse(await readFile(await cataloguePath(), "utf8")) as {
    exports: ExportRecord[];
  };
  return [...new Set(catalogue.exports.map((e) => e.campaign_name))];
}

const [first, second] = smallCampaigns();
if (first === undefined || second === undefined)
  throw new Error("The sandbox has no small campaign with rounds in the window.");

describe("sync --campaign ID --json", () => {
  it("adds the campaign's rounds, and a second run over the same window creates nothing", async () => {
    const run = report(await runSync(["--campaign", first.campaign._id, "--json"]));
    expect(run.campaigns).toBe(1);
    expect(run.exports_created).toBeGreaterThanOrEqual(1);
    expect(run.exports_reused).toBe(0);
    expect(run.rounds_added).toBe(first.rounds);
    expect(run.rows_added).toBeGreaterThan(0);
    expect(run.waited_seconds).toBe(0);
    expect(await sandboxJobsOf(first.campaign._id)).toHaveLength(run.exports_created);
    expect(await campaignNames()).toEqual([first.campaign.name]);

    // As a server leaves an export whose name lookup failed: the next run names it.
    await rewriteCatalogue((record) => ({ ...record, campaign_name: null }));
    expect(await campaignNames()).toEqual([null]);
    const again = report(await runSync(["--campaign", first.campaign._id, "--json"]));
    expect(again).toMatchObject({
      campaigns: 1,
      exports_created: 0,
      exports_reused: 0,
      rounds_added: 0,
      rows_added: 0,
    });
    expect(await sandboxJobsOf(first.campaign._id)).toHaveLength(run.exports_created);
    expect(await campaignNames()).toContain(first.campaign.name);
  });

  it("waits for the budget's next slot instead of going over it, and says until when", async () => {
    const run = await runSync(
      ["--campaign", first.campaign._id, "--campaign", second.campaign._id, "--json"],
      // One creation per 20 s: the second export comes well within the window even when a busy
      // machine takes seconds between the two (with 3 s, it sometimes needed no wait at all).
      { CRM_EXPORT_BUDGET: "1/20" },
    );
    const body = report(run);
    expect(body.exports_created).toBe(2);
    expect(body.waited_seconds).toBeGreaterThanOrEqual(1);
    expect(run.stderr).toMatch(
      /export budget spent \(1 of 1 creations\); waiting until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/,
    );
  });
});

describe("a sync killed mid-way", () => {
  it("creates no job twice when started again: the ledger's job is reused", async () => {
    const campaignId = first.campaign._id;
    const ledgerFolder = join(dataDir, "sandbox");
    // Jobs that stay `processing` for a minute, so the kill comes while the first one runs.
    const child = spawn(process.execPath, [BIN, "sync", "--campaign", campaignId, "--json"], {
      env: env({ CRM_SANDBOX_JOB_SECONDS: "60" }),
      stdio: "ignore",
    });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    let jobId = "";
    try {
      await waitUntil(
        async () => {
          const [id] = await sandboxJobsOf(campaignId);
          if (id === undefined) return false;
          // Recorded in the ledger too: the creation is whole on our side. Only the ledger file
          // itself counts: its atomic write's temp file (`export-jobs-….json.<owner>.tmp`) holds
          // the job before the rename, and a kill then leaves the ledger without it.
          const ledgers = (await readdir(ledgerFolder)).filter((n) => LEDGER_FILE.test(n));
          for (const name of ledgers) {
            if ((await readFile(join(ledgerFolder, name), "utf8")).includes(id)) jobId = id;
          }
          return jobId !== "";
        },
        "the first export job, in the sandbox and in the ledger",
        { timeoutMs: 60_000, intervalMs: 100 },
      );
    } finally {
      child.kill("SIGKILL");
      await exited;
    }
    const restarted = report(await runSync(["--campaign", campaignId, "--json"]));
    expect(restarted.exports_created).toBe(0);
    expect(restarted.exports_reused).toBe(1);
    expect(restarted.exports.map((e) => e.job_id)).toEqual([jobId]);
    expect(restarted.rounds_added).toBe(first.rounds);
    expect(await sandboxJobsOf(campaignId)).toEqual([jobId]);
  });
});

describe("bad flags", () => {
  it.each([
    [
      ["--since", "yesterday"],
      /--since: "yesterday" is not a valid date\. Use YYYY-MM-DD .* or a number of days such as 30d\./,
    ],
    [["--until", "2026-13-45"], /--until: "2026-13-45" is not a valid date\. Use YYYY-MM-DD/],
    [["--since", "0d"], /--since: "0d" counts no day; give 1d or more/],
    [["--campaign"], /--campaign needs a value: a campaign ID/],
    [
      ["--bogus"],
      /unknown argument "--bogus"; the flags are --since, --until, --campaign and --json\./,
    ],
    [["--since", "2026-11-10", "--until", "2026-11-01"], /--since \(.*\) is not before --until/],
  ])("sync %j exits 1 with one line naming the flag", async (args, message) => {
    const run = await runSync(args);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(message);
    expect(run.stderr.startsWith("crm-insights-mcp sync: ")).toBe(true);
    expect(run.stderr.trimEnd().split("\n")).toHaveLength(1);
  });
});
