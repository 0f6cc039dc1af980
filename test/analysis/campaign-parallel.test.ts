import { existsSync } from "node:fs";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { campaignWorkerUrl, evenCuts } from "../../src/analysis/campaign-parallel.js";
import {
  type CampaignSummaryOptions,
  summarizeCampaignCsv,
} from "../../src/analysis/campaign-summary.js";
import { AnalysisError } from "../../src/analysis/errors.js";
import type { CampaignSummary } from "../../src/analysis/schemas.js";
import {
  campaignRows,
  fileWithRowsInAMessage,
  HEADER,
  mulberry32,
  toCsv,
} from "./campaign-fixture.js";

/**
 * The summary is the same whatever the order of the rows, however the file is cut between
 * threads and read in chunks. The worker threads run the built script,
 * `dist/analysis/campaign-worker.js`: naming it puts this file among the tests of the built
 * package (vitest.config.ts), which wait for the build instead of running while it replaces dist/.
 */

let dir: string;
let n = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "campaign-parallel-"));
  // Fails loudly (with "run npm run build") when dist/ was not built.
  expect(existsSync(fileURLToPath(campaignWorkerUrl()))).toBe(true);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function fileOf(text: string): Promise<{ path: string; bytes: number }> {
  n++;
  const path = join(dir, `f${n}.csv`);
  await writeFile(path, text);
  return { path, bytes: (await stat(path)).size };
}

/** The summary without its file path (files differ, figures must not). */
async function summary(
  file: { path: string; bytes: number },
  options: CampaignSummaryOptions,
): Promise<Omit<CampaignSummary, "file">> {
  const { file: _file, ...rest } = await summarizeCampaignCsv(file.path, file.bytes, options);
  return rest;
}

/** The fixture's rows plus conversions with fractional amounts and quoted line breaks. */
function rowsFor(seed: number, users: number): string[][] {
  const rows = campaignRows(seed, users);
  const rnd = mulberry32(seed ^ 0x5eed);
  for (let i = 0; i < users; i++) {
    const row = [...(rows[1 + Math.floor(rnd() * (rows.length - 1))] as string[])];
    row[3] = "purchase";
    row[9] = rnd() < 0.5 ? 'multi\nline, "quoted"\r\nmessage' : "";
    row[10] = JSON.stringify({ amount: Math.floor(rnd() * 100000) / 100, currency: "USD" });
    rows.push(row);
  }
  return rows;
}

function shuffled<T>(items: T[], seed: number): T[] {
  const rnd = mulberry32(seed);
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

describe("campaign summary over threads and row orders", () => {
  it("is identical for any row order, cut points and read chunks, with one and two threads", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 5, max: 80 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 16, max: 4096 }),
        fc.constantFrom("\n", "\r\n"),
        async (seed, users, cutFractions, chunkBytes, eol) => {
          const rows = rowsFor(seed, users);
          const [header, ...data] = rows;
          const inOrder = await fileOf(toCsv(rows, eol));
          const reordered = await fileOf(toCsv([header as string[], ...shuffled(data, seed)], eol));
          const cutAt = cutFractions
            .map((f) => Math.floor(f * inOrder.bytes))
            .sort((a, b) => a - b);
          const one = await summary(inOrder, { threads: 1 });
          expect(one.rows).toBe(data.length);
          expect(await summary(reordered, { threads: 1, chunkBytes })).toEqual(one);
          expect(await summary(inOrder, { threads: 2, cutAt, chunkBytes })).toEqual(one);
          expect(
            await summary(reordered, { threads: cutAt.length + 1, cutAt, chunkBytes }),
          ).toEqual(one);
        },
      ),
      { numRuns: 20 },
    );
  }, 120_000);

  it("a cut whose next line break is inside quotes is still read exactly", async () => {
    const rows = rowsFor(7, 40);
    const text = toCsv(rows, "\r\n");
    const file = await fileOf(text);
    // Just before a line break inside a quoted message: the range after it starts mid-field.
    const inside = Buffer.from(text).indexOf("multi\nline");
    expect(inside).toBeGreaterThan(0);
    const cutAt = [inside + 2];
    const one = await summary(file, { threads: 1 });
    expect(await summary(file, { threads: 2, cutAt, chunkBytes: 100 })).toEqual(one);
    expect(await summary(file, { threads: 2, cutAt })).toEqual(one);
  });

  it("a range start wrongly guessed inside a long quoted message is found out", async () => {
    const { path, text, messageAt } = await fileWithRowsInAMessage(dir);
    const file = { path, bytes: text.length };
    const one = await summary(file, { threads: 1 });
    expect(one.rows).toBeGreaterThan(100);
    // The first range ends at the wrong start: this thread reads on to the end of the file.
    expect(await summary(file, { threads: 2, cutAt: [messageAt] })).toEqual(one);
    // A worker's range does: it reads on, and the range after it is dropped.
    const early = text.indexOf(0x0a, 300) + 1;
    expect(await summary(file, { threads: 3, cutAt: [early, messageAt] })).toEqual(one);
    expect(
      await summary(file, { threads: 3, cutAt: [early, messageAt], chunkBytes: 4096 }),
    ).toEqual(one);
  });

  it("a malformed row in a later range gets the one-pass message with its real line", async () => {
    const rows = rowsFor(3, 60);
    const lines = toCsv(rows, "\n").split("\n");
    // A whole data row (not a piece of a quoted multi-line field) near the end.
    const at = lines.findLastIndex((l, i) => i < lines.length - 20 && /^task-[^"]*$/.test(l));
    expect(at).toBeGreaterThan(lines.length / 2);
    lines[at] = `${lines[at]},extra`;
    const text = lines.join("\n");
    const file = await fileOf(text);
    const expected = await summarizeCampaignCsv(file.path, file.bytes, { threads: 1 }).catch(
      (e: unknown) => e,
    );
    expect(expected).toBeInstanceOf(AnalysisError);
    const parallel = await summarizeCampaignCsv(file.path, file.bytes, {
      threads: 2,
      cutAt: [Math.floor(file.bytes / 2)],
    }).catch((e: unknown) => e);
    expect(parallel).toBeInstanceOf(AnalysisError);
    expect((parallel as AnalysisError).message).toBe((expected as AnalysisError).message);
  });

  it("a worker that dies gives a clear error, not a hang", async () => {
    const file = await fileOf(toCsv(campaignRows(5, 200), "\n"));
    const dying = join(dir, "dying-worker.mjs");
    await writeFile(dying, "process.exit(3);\n");
    const throwing = join(dir, "throwing-worker.mjs");
    await writeFile(throwing, "throw new Error('boom in worker');\n");
    const options = { threads: 2, cutAt: [Math.floor(file.bytes / 2)] };
    await expect(
      summarizeCampaignCsv(file.path, file.bytes, {
        ...options,
        workerUrl: new URL(`file://${dying}`),
      }),
    ).rejects.toThrow("A summary worker thread stopped (exit code 3) before sending its result.");
    await expect(
      summarizeCampaignCsv(file.path, file.bytes, {
        ...options,
        workerUrl: new URL(`file://${throwing}`),
      }),
    ).rejects.toThrow("A summary worker thread failed: boom in worker");
  });

  it("stops its workers when cancelled", async () => {
    const file = await fileOf(toCsv(campaignRows(9, 3000), "\n"));
    const controller = new AbortController();
    const running = summarizeCampaignCsv(file.path, file.bytes, {
      threads: 3,
      chunkBytes: 256,
      signal: controller.signal,
    });
    setImmediate(() => controller.abort());
    const failed = await running.catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(AnalysisError);
    expect((failed as AnalysisError).code).toBe("aborted");
  });

  it("a header-less or empty file reads the same with threads", async () => {
    const noHeader = await fileOf(toCsv(campaignRows(2, 50).slice(1), "\n"));
    const options = { threads: 2, cutAt: [Math.floor(noHeader.bytes / 2)] };
    await expect(summarizeCampaignCsv(noHeader.path, noHeader.bytes, options)).rejects.toThrow(
      "Not a campaign export",
    );
    const headerOnly = await fileOf(`${HEADER.join(",")}\n`);
    const r = await summarizeCampaignCsv(headerOnly.path, headerOnly.bytes, {
      threads: 2,
      cutAt: [10],
    });
    expect(r.rows).toBe(0);
  });
});

describe("evenCuts", () => {
  it("gives this thread the head start of a worker's start-up and the workers equal ranges", () => {
    const mb = 1 << 20;
    const [cut] = evenCuts(375 * mb, 2);
    expect(cut).toBe(Math.floor((375 * mb + 24 * mb) / 2));
    const three = evenCuts(600 * mb, 3);
    const ranges = [
      three[0],
      (three[1] as number) - (three[0] as number),
      600 * mb - (three[1] as number),
    ];
    expect((ranges[1] as number) - (ranges[2] as number)).toBeLessThanOrEqual(1);
    expect((ranges[0] as number) - (ranges[1] as number)).toBeGreaterThan(23 * mb);
    // A small file: this thread reads at most half an even share more.
    expect(evenCuts(10 * mb, 2)).toEqual([7.5 * mb]);
    expect(evenCuts(64 * mb, 2)).toEqual([44 * mb]);
  });
});
