import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tallyCampaignRows } from "../../../src/analysis/campaign/tally-in-one-pass.js";
import { AnalysisError } from "../../../src/analysis/errors.js";
import { summarizeFile } from "../../../src/analysis/index.js";
import { campaignRows, HEADER, toCsv } from "./fixture.js";

/**
 * Files of several 1 MiB read chunks: the row pass reads the next chunk while it scans one, so
 * records cross chunk boundaries and a failure can happen with a read still in flight.
 */

let dir: string;
let big: string;
let text: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "campaign-chunks-"));
  big = join(dir, "big.csv");
  // Long quoted multi-line messages make records of uneven size that straddle the boundaries.
  const rows = campaignRows(11, 3000).map((r, i) =>
    i > 0 && r[3] === "message_failed"
      ? r.map((v, k) => (k === 9 ? `${v} "${"긴 메시지,\n".repeat(i % 40)}"` : v))
      : r,
  );
  text = toCsv(rows, "\r\n");
  await writeFile(big, text);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("campaign CSV over several read chunks", () => {
  it("counts every row and event like csv-parse does", async () => {
    expect(Buffer.byteLength(text)).toBeGreaterThan(3 << 20);
    const oracle = parse(await readFile(big), { columns: true }) as Record<string, string>[];
    const count = (type: string) => oracle.filter((r) => r.event_type === type).length;
    const result = await summarizeFile(big);
    if (result.kind !== "campaign_event_data") throw new Error("expected a campaign summary");
    expect(result.rows).toBe(oracle.length);
    expect(result.totals.sent).toBe(count("message_sent"));
    expect(result.totals.received).toBe(count("message_received"));
    expect(result.totals.failed).toBe(count("message_failed"));
    const failedByCode = new Map<string, number>();
    for (const r of oracle) {
      if (r.event_type !== "message_failed") continue;
      const code = r.error_code || "(none)";
      failedByCode.set(code, (failedByCode.get(code) ?? 0) + 1);
    }
    for (const e of result.error_codes) expect(e.count).toBe(failedByCode.get(e.error_code));
  });

  it("reports a bad line far into the file, then summarizes the next file normally", async () => {
    const lines = text.split("\r\n");
    // A data row well past the first chunk gets an extra column.
    const at = lines.findIndex((l, i) => i > 20_000 && l.startsWith("task-") && !l.includes('"'));
    expect(at).toBeGreaterThan(0);
    const broken = join(dir, "broken.csv");
    await writeFile(
      broken,
      [...lines.slice(0, at), `${lines[at]},extra`, ...lines.slice(at + 1)].join("\r\n"),
    );
    const physicalLine =
      lines
        .slice(0, at)
        .join("\r\n")
        .split(/\r\n|\n/).length + 1;
    await expect(summarizeFile(broken)).rejects.toThrow(
      `line ${physicalLine} has ${HEADER.length + 1} columns`,
    );
    const again = await summarizeFile(big);
    expect(again.kind).toBe("campaign_event_data");
  });

  it("stops when cancelled, with the read ahead finished before the file is closed", async () => {
    const controller = new AbortController();
    controller.abort();
    const stat = await import("node:fs/promises").then((m) => m.stat(big));
    const failed = await tallyCampaignRows(big, stat.size, { signal: controller.signal }).catch(
      (e: unknown) => e,
    );
    expect(failed).toBeInstanceOf(AnalysisError);
    expect((failed as AnalysisError).message).toContain("cancelled");
    const again = await tallyCampaignRows(big, stat.size);
    expect(again.rows).toBeGreaterThan(20_000);
  });
});
