import { existsSync } from "node:fs";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rangeStarts } from "../../../src/analysis/campaign/chunk-starts.js";
import {
  type CampaignSummaryOptions,
  summarizeCampaignCsv,
} from "../../../src/analysis/campaign/summary.js";
import { newTally } from "../../../src/analysis/campaign/tally.js";
import {
  campaignWorkerUrl,
  chunkCuts,
  tallyInParallel,
} from "../../../src/analysis/campaign/tally-in-parallel.js";
import {
  type ChunkEnd,
  newClaim,
  readChunks,
  takeChunk,
  type WorkerJob,
} from "../../../src/analysis/campaign/thread-chunks.js";
import { AnalysisError } from "../../../src/analysis/errors.js";
import type { CampaignSummary } from "../../../src/analysis/schemas.js";
import { campaignRows, fileWithRowsInAMessage, HEADER, mulberry32, toCsv } from "./fixture.js";

/**
 * The summary is the same whatever the order of the rows, however the file is cut between
 * threads and read in chunks. The worker threads run the built script,
 * `dist/analysis/campaign/tally-worker.js`: naming it puts this file among the tests of the built
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

  it("reads a regular file's chunks each once between the threads, with no second pass", async () => {
    const file = await fileOf(toCsv(campaignRows(13, 3000), "\n"));
    const one = await summary(file, { threads: 1 });
    const chunksRead: number[][] = [];
    const t = await tallyInParallel(file.path, file.bytes, { threads: 2, chunksRead });
    // Undefined would mean the file was to be read again in one pass.
    expect(t?.rows).toBe(one.rows);
    const chunks = chunkCuts(file.bytes, 2).length + 1;
    expect(chunks).toBeGreaterThan(10);
    // How many the worker gets depends on its start-up; this thread reads from the front.
    const [mine = [], worker = []] = chunksRead;
    expect(mine.slice(0, 2)).toEqual([0, 1]);
    expect([...mine, ...worker].sort((a, b) => a - b)).toEqual([...Array(chunks).keys()]);
  });

  it("two readers of one claim read from both ends and meet, each chunk once", async () => {
    const file = await fileOf(toCsv(campaignRows(17, 2000), "\n"));
    const bounds = [
      0,
      ...(await rangeStarts(file.path, file.bytes, chunkCuts(file.bytes, 2))),
      file.bytes,
    ];
    const job: WorkerJob = {
      path: file.path,
      bytes: file.bytes,
      bounds,
      claim: newClaim(bounds.length - 1),
      threads: 2,
      conversionType: undefined,
      chunkBytes: 1024,
    };
    // One thread, two readers: their reads' awaits interleave them.
    const [front, back] = [newTally(file.bytes), newTally(file.bytes)];
    const [mine = [], theirs = []] = await Promise.all([
      readChunks(front, job, { first: true }),
      readChunks(back, job, { first: false }),
    ]);
    const taken = (ends: ChunkEnd[]) => ends.map((e) => e.chunk);
    expect(taken(mine)[0]).toBe(0);
    expect(taken(theirs)[0]).toBe(bounds.length - 2);
    expect(theirs.length).toBeGreaterThan(1);
    const all = [...taken(mine), ...taken(theirs)].sort((a, b) => a - b);
    expect(all).toEqual([...Array(bounds.length - 1).keys()]);
    // Side by side: this reader's chunks come before the other's.
    expect(Math.max(...taken(mine))).toBeLessThan(Math.min(...taken(theirs)));
    expect([...mine, ...theirs].every((e) => e.atRecordBoundary)).toBe(true);
    expect(front.rows + back.rows).toBe((await summary(file, { threads: 1 })).rows);
  });

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
    // The first chunk ends at the wrong start: the file is read again in one pass.
    expect(await tallyInParallel(path, file.bytes, { threads: 2, cutAt: [messageAt] })).toBe(
      undefined,
    );
    expect(await summary(file, { threads: 2, cutAt: [messageAt] })).toEqual(one);
    // So it is when a later chunk does, whichever thread reads it.
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

describe("chunkCuts", () => {
  const mb = 1 << 20;
  const sizesOf = (bytes: number, cuts: number[]): number[] =>
    [...cuts, bytes].map((b, k) => b - ([0, ...cuts][k] as number));

  it("cuts large chunks at both ends and small ones where the threads are expected to meet", () => {
    for (const [bytes, threads] of [
      [375 * mb, 2],
      [749 * mb, 2],
      [600 * mb, 4],
      [64 * mb, 2],
      [2 ** 31 - 1, 3],
    ] as const) {
      const cuts = chunkCuts(bytes, threads);
      const sizes = sizesOf(bytes, cuts);
      expect(cuts).toEqual([...new Set(cuts)].sort((a, b) => a - b));
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(bytes);
      // The meeting point: this thread's share longer by a worker's start-up (24 MiB).
      const meet = Math.floor(Math.min(1.5 * bytes, bytes + (threads - 1) * 24 * mb) / threads);
      const at = cuts.indexOf(meet);
      expect(at).toBeGreaterThan(0);
      expect(sizes[0]).toBe(Math.floor(meet / 4));
      expect(sizes.at(-1)).toBeGreaterThanOrEqual(Math.floor((bytes - meet) / 4));
      // Shrinking towards the meeting point from both sides, to about 4 MiB there (the chunks
      // next to it hold what is left: up to 6 MiB).
      for (let k = 1; k < at; k++)
        expect(sizes[k]).toBeLessThanOrEqual((sizes[k - 1] as number) + 1);
      for (let k = at + 3; k < sizes.length; k++) {
        expect(sizes[k]).toBeGreaterThanOrEqual((sizes[k - 1] as number) - 1);
      }
      expect(sizes[at]).toBeLessThan(6 * mb + 1);
      expect(sizes[at + 1]).toBeLessThan(6 * mb + 1);
      expect(Math.min(...sizes)).toBeGreaterThanOrEqual(Math.min(2 * mb, bytes / (32 * threads)));
      // A few dozen chunks, not hundreds.
      expect(sizes.length).toBeLessThan(40);
    }
  });

  it("cuts a small file asked to use threads into small chunks, the least a sixteenth of a share", () => {
    const sizes = sizesOf(2 * mb, chunkCuts(2 * mb, 2));
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(mb / 32 / 2);
    expect(sizes.length).toBeGreaterThan(4);
    expect(chunkCuts(1000, 2).length).toBeGreaterThan(2);
  });
});

describe("takeChunk", () => {
  it("gives the first thread the chunks from the front and the workers those from the back, each once", () => {
    const claim = newClaim(6);
    expect(takeChunk(claim, true)).toBe(5);
    expect(takeChunk(claim, false)).toBe(1);
    expect(takeChunk(claim, true)).toBe(4);
    expect(takeChunk(claim, true)).toBe(3);
    expect(takeChunk(claim, false)).toBe(2);
    expect(takeChunk(claim, false)).toBeUndefined();
    expect(takeChunk(claim, true)).toBeUndefined();
    expect(() => newClaim(0x8000)).toThrow("Too many chunks");
  });
});
