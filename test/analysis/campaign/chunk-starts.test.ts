import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rangeStarts } from "../../../src/analysis/campaign/chunk-starts.js";
import { campaignRows, fileWithRowsInAMessage, toCsv } from "./fixture.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "campaign-cuts-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("where the threads' ranges start", () => {
  it("skips line breaks inside quoted fields unless what follows reads as 16 rows", async () => {
    const { text, path, messageAt, fakeStart, afterQuoted } = await fileWithRowsInAMessage(dir);
    const bytes = (await stat(path)).size;
    // A cut just before the message's end: the next line break ends the quoted row's line, and
    // the line after it is a real record start.
    expect(await rangeStarts(path, bytes, [text.indexOf("try later")])).toEqual([afterQuoted]);
    // A cut inside the message: the line break there is followed by more than 16 rows of the
    // campaign's width, so it is taken (a guess the range before will find wrong).
    expect(await rangeStarts(path, bytes, [messageAt])).toEqual([fakeStart]);
    // A cut in the middle of a row: the next line start.
    const cut = text.indexOf(0x0a, 200) - 3;
    expect(await rangeStarts(path, bytes, [cut])).toEqual([cut + 4]);
    // Cuts past the last line start, or before a start already taken, add nothing.
    expect(await rangeStarts(path, bytes, [cut, cut + 1, bytes - 2])).toEqual([cut + 4]);
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
    expect(await rangeStarts(path, text.length, [at])).toEqual([rowAfter]);
  });
});
