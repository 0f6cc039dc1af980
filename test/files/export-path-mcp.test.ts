import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summarizeFile } from "../../src/analysis/index.js";
import { campaignRows, toCsv } from "../analysis/campaign/fixture.js";
import { type Harness, startHarness } from "../helpers/tool-harness.js";

/**
 * The one file rule of summarize_export and query_export, through the MCP client: files inside
 * the data folder only (located before any byte is read), and the same text for the same problem
 * from both tools.
 */

let h: Harness;
let outside: string;

beforeAll(async () => {
  h = await startHarness();
  outside = await mkdtemp(join(tmpdir(), "crm-outside-"));
});
afterAll(async () => {
  await h?.close();
  if (outside !== undefined) await rm(outside, { recursive: true, force: true });
});

const GOOD = toCsv(campaignRows(2, 5));

/** Both tools on one file: each answer's text after its "Error in <tool>: " prefix. */
async function bothRefuse(file: string): Promise<{ summarize: string; query: string }> {
  const s = await h.call("summarize_export", { file });
  const q = await h.call("query_export", { files: [file], sql: "SELECT count(*) FROM events" });
  expect(s.isError, s.text).toBe(true);
  expect(q.isError, q.text).toBe(true);
  expect(s.text.startsWith("Error in summarize_export: ")).toBe(true);
  expect(q.text.startsWith("Error in query_export: ")).toBe(true);
  return {
    summarize: s.text.slice("Error in summarize_export: ".length),
    query: q.text.slice("Error in query_export: ".length),
  };
}

describe("which files summarize_export and query_export read", () => {
  it("an outside file with a wrong header is refused as outside the data folder by both", async () => {
    const file = join(outside, "not-an-export.csv");
    await writeFile(file, "name,email\nkim,kim@example.com\n");
    const { summarize, query } = await bothRefuse(file);
    expect(summarize).toBe(query);
    expect(summarize).toMatch(
      new RegExp(`^${JSON.stringify(file)} is outside the data folder \\(${h.dataDir}\\)`),
    );
    expect(summarize).not.toContain("campaign export:");
  });

  it("a good export outside the folder is refused too, and so is a missing one (no hint of existence)", async () => {
    const file = join(outside, "campaign.csv");
    await writeFile(file, GOOD);
    const present = await bothRefuse(file);
    const missing = await bothRefuse(join(outside, "never-written.csv"));
    for (const text of [present.summarize, present.query, missing.summarize, missing.query]) {
      expect(text).toContain("is outside the data folder");
    }
    expect(missing.summarize.replace("never-written", "campaign")).toBe(present.summarize);
  });

  it("a link inside the folder to a file outside, `..`, and a sibling folder sharing its name's prefix are outside", async () => {
    const target = join(outside, "linked.csv");
    await writeFile(target, GOOD);
    const link = join(h.dataDir, "linked.csv");
    await symlink(target, link);
    const sibling = `${h.dataDir}-sibling`;
    await mkdir(sibling);
    try {
      await writeFile(join(sibling, "campaign.csv"), GOOD);
      for (const file of [
        link,
        `${h.dataDir}/../crm-outside-x/campaign.csv`,
        join(sibling, "campaign.csv"),
      ]) {
        const { summarize, query } = await bothRefuse(file);
        expect(summarize).toBe(query);
        expect(summarize).toContain(`${JSON.stringify(file)} is outside the data folder`);
      }
    } finally {
      await rm(sibling, { recursive: true, force: true });
      await rm(link, { force: true });
    }
  });

  it("an empty CSV gets the same answer from both", async () => {
    const file = join(h.dataDir, "empty.csv");
    await writeFile(file, "");
    const { summarize, query } = await bothRefuse(file);
    expect(summarize).toBe(query);
    expect(summarize).toMatch(new RegExp(`^${JSON.stringify(file)} is empty`));
    // The summarize command reads any file, and says why in the same words.
    await expect(summarizeFile(file)).rejects.toThrow(
      `The file is empty: ${summarize.slice(`${JSON.stringify(file)} is empty: `.length)}`,
    );
    // Only a byte-order mark and a line break is as empty.
    const bom = join(h.dataDir, "bom-only.csv");
    await writeFile(bom, "\uFEFF\r\n");
    const again = await bothRefuse(bom);
    expect(again.summarize).toBe(again.query);
    expect(again.summarize).toMatch(new RegExp(`^${JSON.stringify(bom)} is empty`));
  });

  it("a missing file, a wrong extension and another CSV in the folder: the same answer from both", async () => {
    const missing = join(h.dataDir, "exports", "gone.csv");
    const text = join(h.dataDir, "notes.txt");
    await writeFile(text, GOOD);
    const folder = join(h.dataDir, "folder.csv");
    await mkdir(folder);
    const other = join(h.dataDir, "contacts.csv");
    await writeFile(other, "name,email\nkim,kim@example.com\n");
    const expected: [string, RegExp][] = [
      [missing, / was not found\. Pass the job_id of an export/],
      [text, / is not an export file: its extension is "\.txt"\./],
      [folder, / is not an export file: it is not a regular file\./],
      [other, / is not a campaign export: its first line must be the header/],
    ];
    for (const [file, pattern] of expected) {
      const { summarize, query } = await bothRefuse(file);
      expect(summarize).toBe(query);
      expect(summarize.startsWith(JSON.stringify(file))).toBe(true);
      expect(summarize).toMatch(pattern);
    }
  });

  it("an export anywhere in the folder, also through a link that stays inside, is read by both", async () => {
    await mkdir(join(h.dataDir, "imports"), { recursive: true });
    const file = join(h.dataDir, "imports", "campaign.csv");
    await writeFile(file, GOOD);
    const link = join(h.dataDir, "campaign-link.csv");
    await symlink(file, link);
    const rows = campaignRows(2, 5).length - 1;
    for (const path of [file, link]) {
      const s = await h.call("summarize_export", { file: path });
      expect(s.isError, s.text).toBeFalsy();
      expect(s.structured.rows).toBe(rows);
      expect(s.structured.file_path).toBe(file);
      const q = await h.call("query_export", {
        files: [path],
        sql: "SELECT count(*) FROM events",
      });
      expect(q.isError, q.text).toBeFalsy();
      expect(q.structured.rows).toEqual([[rows]]);
    }
  });
});
