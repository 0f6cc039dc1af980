import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  pieceCuts,
  pieceStarts,
  takeNoMore,
  takePiece,
  untaken,
} from "../../src/analysis/campaign-pieces.js";
import { campaignRows, fileWithRowsInAMessage, toCsv } from "./campaign-fixture.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "campaign-pieces-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("taking pieces from both ends", () => {
  it("hands out every piece exactly once, front ones in order and back ones in reverse", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300 }), fc.array(fc.boolean()), (end, sides) => {
        const pieces = untaken(1, end);
        const front: number[] = [];
        const back: number[] = [];
        for (const fromBack of [...sides, ...Array<boolean>(end).fill(false)]) {
          const p = takePiece(pieces, fromBack);
          if (p < 0) break;
          (fromBack ? back : front).push(p);
        }
        expect(takePiece(pieces, false)).toBe(-1);
        expect(takePiece(pieces, true)).toBe(-1);
        const all = [...front, ...back].sort((a, b) => a - b);
        expect(all).toEqual(Array.from({ length: Math.max(0, end - 1) }, (_, k) => k + 1));
        expect(front).toEqual([...front].sort((a, b) => a - b));
        expect(back).toEqual([...back].sort((a, b) => b - a));
      }),
    );
  });

  it("gives nothing more once told to stop", () => {
    const pieces = untaken(1, 10);
    expect(takePiece(pieces, false)).toBe(1);
    takeNoMore(pieces);
    expect(takePiece(pieces, true)).toBe(-1);
    expect(takePiece(pieces, false)).toBe(-1);
  });
});

describe("where pieces start", () => {
  it("cuts a file in pieces of 4-16 MiB, at least one per thread", () => {
    expect(pieceCuts(375_000_000, 2)).toHaveLength(31);
    expect(pieceCuts(2_000_000, 2)).toEqual([1_000_000]);
    expect(pieceCuts(2 ** 31, 2).length).toBe(127);
    expect(pieceCuts(100, 1)).toEqual([]);
  });

  it("skips line breaks inside quoted fields unless what follows reads as rows for 256 KiB", async () => {
    const { text, path, messageAt, fakeStart, afterQuoted } = await fileWithRowsInAMessage(dir);
    const bytes = (await stat(path)).size;
    // A cut just before the message's end: the next line break ends the quoted row's line, and
    // the line after it is a real record start.
    expect(await pieceStarts(path, bytes, [text.indexOf("try later")])).toEqual([0, afterQuoted]);
    // A cut inside the message: the line break there is followed by more than the look-ahead of
    // rows of the campaign's width, so it is taken (a guess the piece before will find wrong).
    expect(await pieceStarts(path, bytes, [messageAt])).toEqual([0, fakeStart]);
    // A cut in the middle of a row: the next line start.
    const cut = text.indexOf(0x0a, 200) - 3;
    expect(await pieceStarts(path, bytes, [cut])).toEqual([0, cut + 4]);
    // Cuts past the last line start, or on a start already taken, add nothing.
    expect(await pieceStarts(path, bytes, [cut, cut + 1, bytes - 2])).toEqual([0, cut + 4]);
  });

  it("does not take a line break inside quotes when the message's text does not read as rows", async () => {
    const rows = campaignRows(12, 30);
    const quoted = [...(rows[5] as string[])];
    quoted[9] = "upstream said:\nservice unavailable, try later";
    const head = toCsv(rows.slice(0, 20), "\n");
    const text = Buffer.from(head + toCsv([quoted], "\n") + toCsv(rows.slice(20), "\n"));
    const path = join(dir, "short-message.csv");
    await writeFile(path, text);
    const at = text.indexOf("upstream said:");
    const rowAfter = text.indexOf(0x0a, text.indexOf("try later")) + 1;
    expect(await pieceStarts(path, text.length, [at])).toEqual([0, rowAfter]);
  });
});
