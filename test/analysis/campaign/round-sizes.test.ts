import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { roleCoder } from "../../../src/analysis/campaign/row-to-tally.js";
import { type CampaignTally, mergePart, toPart } from "../../../src/analysis/campaign/tally.js";
import { tallyCampaignRows } from "../../../src/analysis/campaign/tally-in-one-pass.js";
import { U64Map } from "../../../src/analysis/csv/hash-table.js";
import { eventRow, HEADER, toCsv } from "./fixture.js";

/**
 * A later round's maps are sized from the largest round of its kind so far (few regrowths when a
 * campaign's rounds are alike), but the storage reserved so is bounded: one large round and many
 * small ones must not reserve the large one's size for each.
 */

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "round-sizes-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Rows of one round: each user sent, received and (every other one) opened. */
function roundRows(task: string, scheduled: string, users: number): string[][] {
  const rows: string[][] = [];
  for (let u = 0; u < users; u++) {
    const user = `${task}-user-${u}`;
    const row = (event: string, at: string): string[] =>
      eventRow({ task, scheduled, group: "그룹A", event, platformUserId: user, at });
    rows.push(row("message_sent", scheduled), row("message_received", scheduled));
    if (u % 2 === 0) rows.push(row("push_opened", scheduled));
  }
  return rows;
}

async function tallyOf(rounds: [string, number][]): Promise<CampaignTally> {
  const rows = [
    HEADER,
    ...rounds.flatMap(([task, users]) => roundRows(task, "2025-03-01 10:00:00", users)),
  ];
  const path = join(dir, `rounds-${rounds.length}.csv`);
  await writeFile(path, toCsv(rows, "\n"));
  return tallyCampaignRows(path, (await stat(path)).size);
}

/** Bytes of storage of all rounds' maps, and what their keys need. */
function storage(t: CampaignTally): { bytes: number; needed: number } {
  let bytes = 0;
  let needed = 0;
  for (const r of t.rounds) {
    for (const map of [r.receipts, r.firstOpen, r.clickUsers, r.conversionUsers, r.controlUsers]) {
      bytes += map.neededBytes + map.unusedBytes;
      needed += map.neededBytes;
    }
  }
  return { bytes, needed };
}

describe("rounds' map sizes", () => {
  it("reserve a bounded amount after a large round followed by many small ones", async () => {
    const t = await tallyOf([
      ["big", 60_000],
      ...Array.from({ length: 300 }, (_, k): [string, number] => [`small-${k}`, 3]),
    ]);
    expect(t.rounds).toHaveLength(301);
    expect(t.rounds.at(-1)?.receipts.size).toBe(3);
    const { bytes, needed } = storage(t);
    // Sized like the large round (66,000 receipts, 33,000 opens: about 1.6 MB a round), the
    // small rounds alone would hold about 470 MB; the reserve allows 8 MB of unused storage.
    expect(needed).toBeLessThan(2 << 20);
    expect(bytes).toBeLessThan(12 << 20);
  });

  it("still size a round like the largest of its kind when the rounds are alike", async () => {
    const t = await tallyOf(
      Array.from({ length: 6 }, (_, k): [string, number] => [`alike-${k}`, 20_000]),
    );
    const slotsFor = (keys: number) => Math.ceil((keys * 1.1) / 0.75) + 1;
    for (const r of t.rounds.slice(1)) {
      // Made for 1.1 x the last round's keys at once (up to a batch of 512 updates may still be
      // pending when the next round starts), and it never grew (that would make it 1.5 x larger).
      expect(r.receipts.size).toBe(20_000);
      expect(r.receipts.capacity).toBeGreaterThanOrEqual(slotsFor(20_000 - 512));
      expect(r.receipts.capacity).toBeLessThanOrEqual(slotsFor(20_000));
    }
  });

  it("give a round merged from another thread's tally empty maps, which take over that one's", async () => {
    const large = await tallyOf([["large", 20_000]]);
    const small = await tallyOf(
      Array.from({ length: 40 }, (_, k): [string, number] => [`s-${k}`, 50]),
    );
    const { part } = toPart(small);
    const made = vi.spyOn(U64Map, "forEntries");
    try {
      mergePart(large, part, roleCoder(undefined));
      // Sized like the large round, each would have been made (and written) only to be dropped.
      expect(made.mock.calls.length).toBeGreaterThan(0);
      expect(Math.max(...made.mock.calls.map(([entries]) => entries))).toBe(0);
    } finally {
      made.mockRestore();
    }
    expect(large.rounds).toHaveLength(41);
    expect(large.rounds.at(-1)?.receipts.size).toBe(50);
  });
});
