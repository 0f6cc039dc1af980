import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordLoadsTo } from "../helpers/load-recorder.js";
import { campaignRows, HEADER, toCsv } from "./campaign/fixture.js";

/** The built bin's `summarize` command (dist/ is built first by this file's vitest project). */

const BIN = join(import.meta.dirname, "../../dist/cli.js");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function summarize(
  args: string[],
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
): Promise<Run> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("CRM_")),
  );
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...nodeArgs, BIN, "summarize", ...args],
      { env: { ...clean, ...env }, timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

let dir: string;
let file: string;
let rows: string[][];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "summarize-cli-"));
  file = join(dir, "campaign.csv");
  rows = campaignRows(7, 10);
  await writeFile(file, toCsv(rows));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("crm-insights-mcp summarize", () => {
  it("exit 0: --json prints the summary of the file", async () => {
    const run = await summarize([file, "--json"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout) as {
      kind: string;
      rows: number;
      totals: { sent: number; received: number };
      timing: { time_zone: string };
    };
    const type = HEADER.indexOf("event_type");
    const count = (t: string) => rows.slice(1).filter((r) => r[type] === t).length;
    expect(result.kind).toBe("campaign_event_data");
    expect(result.rows).toBe(rows.length - 1);
    expect(result.totals.sent).toBe(count("message_sent"));
    expect(result.totals.received).toBe(count("message_received"));
    expect(result.timing.time_zone).toBe("Asia/Seoul");
  });

  it("reads CRM_TIME_ZONE", async () => {
    const run = await summarize([file, "--json"], { CRM_TIME_ZONE: "Europe/Berlin" });
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as { timing: { time_zone: string } }).timing.time_zone).toBe(
      "Europe/Berlin",
    );
  });

  it("exit 1: a file that is not a campaign export", async () => {
    const other = join(dir, "other.csv");
    await writeFile(other, "a,b\n1,2\n");
    const run = await summarize([other, "--json"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("crm-insights-mcp summarize:");
  });

  it("exit 1: the server's size cap (CRM_MAX_DOWNLOAD_MB) applies", async () => {
    const size = (await stat(file)).size;
    const capMb = (size - 1) / 1024 / 1024;
    const run = await summarize([file, "--json"], { CRM_MAX_DOWNLOAD_MB: String(capMb) });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`above the ${Math.floor(capMb * 1024 * 1024)}-byte limit`);
  });

  it("--threads 2: the bundled bin's worker thread reads part of the file, and the summary is one thread's", async () => {
    // Big enough that the second thread's range holds rounds of its own.
    const big = join(dir, "two-threads.csv");
    await writeFile(big, toCsv(campaignRows(21, 3000)));
    const loads = (threads: number) => join(dir, `loads-${threads}.txt`);
    const one = await summarize([big, "--json", "--threads", "1"], {}, [
      "--import",
      recordLoadsTo(loads(1)),
    ]);
    const two = await summarize([big, "--json", "--threads", "2"], {}, [
      "--import",
      recordLoadsTo(loads(2)),
    ]);
    expect(one.stderr).toBe("");
    expect(two.stderr).toBe("");
    expect([one.code, two.code]).toEqual([0, 0]);
    // The worker script ran with two threads only (the loads of both threads are recorded).
    const worker = "/dist/analysis/campaign/tally-worker.js";
    expect((await readFile(loads(1), "utf8")).includes(worker)).toBe(false);
    expect((await readFile(loads(2), "utf8")).includes(worker)).toBe(true);
    expect((JSON.parse(one.stdout) as { rows: number }).rows).toBeGreaterThan(10_000);
    expect(JSON.parse(two.stdout)).toEqual(JSON.parse(one.stdout));
  });

  it("exit 2: --threads outside 1 to 16", async () => {
    for (const bad of ["0", "17", "1.5", "x"]) {
      const run = await summarize([file, "--threads", bad]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain("--threads needs a whole number from 1 to 16.");
    }
  });

  it("exit 2: a bad CRM_TIME_ZONE is named; usage errors", async () => {
    const zone = await summarize([file, "--json"], { CRM_TIME_ZONE: "Mars/Olympus" });
    expect(zone.code).toBe(2);
    expect(zone.stderr).toContain("CRM_TIME_ZONE: not a known IANA time zone");
    expect(zone.stdout).toBe("");
    expect((await summarize(["--json"])).code).toBe(2);
    expect((await summarize([file, "--nope"])).code).toBe(2);
  });
});
