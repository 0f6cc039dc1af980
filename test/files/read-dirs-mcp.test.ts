import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { campaignRows, toCsv } from "../analysis/campaign/fixture.js";
import { type Harness, startHarness } from "../helpers/tool-harness.js";

/**
 * CRM_READ_DIRS through the MCP client: a file in a folder the user listed is read by
 * summarize_export and query_export as one in the data folder is; anything else is refused by the
 * same realpath rule, and the refusal lists the folders read and how to add one.
 */

let h: Harness;
/** The folder listed in CRM_READ_DIRS, as a user's Downloads. */
let downloads: string;
/** A second listed folder, reached through a link (as a Downloads folder on another disk). */
let linkedReal: string;
let linked: string;
/** Not listed anywhere. */
let outside: string;
const made: string[] = [];

beforeAll(async () => {
  downloads = await mkdtemp(join(tmpdir(), "crm-downloads-"));
  linkedReal = await mkdtemp(join(tmpdir(), "crm-linked-real-"));
  outside = await mkdtemp(join(tmpdir(), "crm-outside-"));
  linked = join(outside, "downloads-link");
  await symlink(linkedReal, linked);
  made.push(downloads, linkedReal, outside);
  h = await startHarness({ env: { CRM_READ_DIRS: `${downloads},${linked}` } });
});
afterAll(async () => {
  await h?.close();
  for (const folder of made) await rm(folder, { recursive: true, force: true });
});

const ROWS = campaignRows(2, 5);
const GOOD = toCsv(ROWS);

async function summarizeAndQuery(file: string) {
  const s = await h.call("summarize_export", { file });
  const q = await h.call("query_export", { files: [file], sql: "SELECT count(*) FROM events" });
  return { s, q };
}

/** Both tools refuse `file` with the same text (after each "Error in <tool>: " prefix). */
async function bothRefuse(file: string): Promise<string> {
  const { s, q } = await summarizeAndQuery(file);
  expect(s.isError, s.text).toBe(true);
  expect(q.isError, q.text).toBe(true);
  const text = s.text.slice("Error in summarize_export: ".length);
  expect(q.text.slice("Error in query_export: ".length)).toBe(text);
  return text;
}

describe("CRM_READ_DIRS", () => {
  it("a file in a listed folder is summarized and queried, and one in a subfolder too", async () => {
    await mkdir(join(downloads, "2026-11"), { recursive: true });
    for (const file of [join(downloads, "campaign.csv"), join(downloads, "2026-11", "c.csv")]) {
      await writeFile(file, GOOD);
      const { s, q } = await summarizeAndQuery(file);
      expect(s.isError, s.text).toBeFalsy();
      expect(s.structured.rows).toBe(ROWS.length - 1);
      expect(s.structured.file_path).toBe(file);
      expect(q.isError, q.text).toBeFalsy();
      expect(q.structured.rows).toEqual([[ROWS.length - 1]]);
      expect(q.structured.files).toEqual([{ path: file, job_id: null }]);
    }
  });

  it("a listed folder that is a link is read by its real path, through either name", async () => {
    await writeFile(join(linkedReal, "campaign.csv"), GOOD);
    for (const file of [join(linked, "campaign.csv"), join(linkedReal, "campaign.csv")]) {
      const { s, q } = await summarizeAndQuery(file);
      expect(s.isError, s.text).toBeFalsy();
      expect(s.structured.file_path).toBe(join(linkedReal, "campaign.csv"));
      expect(q.isError, q.text).toBeFalsy();
    }
  });

  it("a file outside every folder is still refused, and the refusal lists them and CRM_READ_DIRS", async () => {
    const file = join(outside, "campaign.csv");
    await writeFile(file, GOOD);
    const text = await bothRefuse(file);
    expect(text).toBe(
      `${JSON.stringify(file)} is outside the folders summarize_export and query_export read: the data folder (${h.dataDir}) and CRM_READ_DIRS (${downloads}, ${linked}). No other file of the machine they run on can be read through them. Pass the job_id of an export (from start_export or check_export), copy the file into the data folder, add its folder to CRM_READ_DIRS in the server's configuration (absolute folders, comma-separated), or read it in your own shell with \`crm-insights-mcp summarize FILE\` or \`crm-insights-mcp query --sql ... FILE\`.`,
    );
    // A missing file outside gets the same answer: no hint of what exists there.
    const missing = await bothRefuse(join(outside, "never-written.csv"));
    expect(missing.replace("never-written", "campaign")).toBe(text);
  });

  it("a link inside a listed folder to a file outside is refused, and so are `..` and a prefix sibling", async () => {
    const target = join(outside, "secret.csv");
    await writeFile(target, GOOD);
    const link = join(downloads, "looks-local.csv");
    await symlink(target, link);
    const dirLink = join(downloads, "outside-dir");
    await symlink(outside, dirLink);
    const sibling = `${downloads}-sibling`;
    made.push(sibling);
    await mkdir(sibling);
    await writeFile(join(sibling, "campaign.csv"), GOOD);
    for (const file of [
      link,
      join(dirLink, "secret.csv"),
      `${downloads}/../${outside.split("/").pop()}/secret.csv`,
      join(sibling, "campaign.csv"),
    ]) {
      const text = await bothRefuse(file);
      expect(text.startsWith(`${JSON.stringify(file)} is outside the folders`), text).toBe(true);
    }
  });

  it("a file missing in a listed folder is not found, and the answer names where to look", async () => {
    const file = join(downloads, "gone.csv");
    const text = await bothRefuse(file);
    expect(text).toBe(
      `${JSON.stringify(file)} was not found. Pass the job_id of an export (from start_export or check_export), or the absolute path of an export file in the data folder (${h.dataDir}) or CRM_READ_DIRS (${downloads}, ${linked}).`,
    );
  });
});
