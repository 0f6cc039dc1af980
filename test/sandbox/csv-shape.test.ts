import { mkdtemp, open as openFile, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { afterAll, describe, expect, it } from "vitest";
import { parseSandboxArgs } from "../../src/sandbox/cli.js";
import { writeInTimeOrder } from "../../src/sandbox/csv-order.js";
import type { CsvShape } from "../../src/sandbox/csv-shape.js";
import { CsvSink } from "../../src/sandbox/csv-sink.js";
import {
  createTimeFormatter,
  formatRow,
  type SelectedRound,
  writeCampaignCsv,
} from "../../src/sandbox/csv-writer.js";
import { createWorld } from "../../src/sandbox/world/index.js";
import type { SandboxCampaign } from "../../src/sandbox/world/types.js";
import { must } from "../helpers/must.js";
import { NOW, SEED, world } from "./world/fixtures.js";

// Campaign exports in other row orders and ID spellings: the same rows, in the promised order.
const dir = await mkdtemp(join(tmpdir(), "csv-shape-test-"));
afterAll(() => rm(dir, { recursive: true, force: true }));

const w = world();
/** An A/B test with a control group and many small rounds. */
const campaign = w.campaigns.find(
  (c) => c.is_ab_test && c.tasks.some((t) => t.rounds.some((r) => r.isControl)),
) as SandboxCampaign;
const rounds: SelectedRound[] = campaign.tasks
  .slice(0, 12)
  .flatMap((task) => task.rounds.map((round) => ({ task, round })));
const COL = { task: 0, group: 2, user: 4, platformUser: 5, captured: 6 };

async function rowsOf(shape: CsvShape, name: string): Promise<string[][]> {
  const path = join(dir, `${name}.csv`);
  const result = await writeCampaignCsv(w, rounds, path, 540, undefined, shape);
  const parsed = parse(await readFile(path)) as string[][];
  expect(result.rows).toBe(parsed.length - 1);
  return parsed.slice(1);
}

/** The rows as sorted lines, IDs left out (each shape spells them its own way). */
const withoutIds = (rows: string[][]): string[] =>
  rows
    .map((r) => r.filter((_, i) => i !== COL.user && i !== COL.platformUser).join("\u0001"))
    .sort();

describe("campaign CSV shapes", () => {
  it("writes the same rows in every order, sorted as promised", async () => {
    const own = await rowsOf({}, "own");
    const inTask = await rowsOf({ order: "time-in-round" }, "in-task");
    const byTime = await rowsOf({ order: "time" }, "by-time");
    expect(own.length).toBeGreaterThan(500);
    const lines = (rows: string[][]) => rows.map((r) => r.join("\u0001")).sort();
    expect(lines(inTask)).toEqual(lines(own));
    expect(lines(byTime)).toEqual(lines(own));

    // By time across the file; within each task (tasks one after the other) for time-in-round.
    for (let i = 1; i < byTime.length; i++) {
      const earlier = must(byTime[i - 1]?.[COL.captured], "captured_at");
      expect(earlier <= must(byTime[i]?.[COL.captured], "captured_at")).toBe(true);
    }
    const taskOrder = [...new Set(own.map((r) => r[COL.task]))];
    const rank = (r: string[]) => taskOrder.indexOf(r[COL.task] as string);
    for (let i = 1; i < inTask.length; i++) {
      const a = inTask[i - 1] as string[];
      const b = inTask[i] as string[];
      expect(
        rank(a) < rank(b) ||
          (rank(a) === rank(b) && (a[COL.captured] as string) <= (b[COL.captured] as string)),
      ).toBe(true);
    }
    // The groups really interleave: within a task the group changes far more often than twice.
    const changes = inTask.filter((r, i) => i > 0 && r[COL.group] !== inTask[i - 1]?.[COL.group]);
    expect(changes.length).toBeGreaterThan(taskOrder.length * 10);
  });

  it("spells IDs in other shapes, one spelling per user, distinct users kept distinct", async () => {
    const own = await rowsOf({}, "ids-own");
    const shaped = await rowsOf({ platformIds: "hex24", customerIds: "email" }, "ids-hex");
    const shapedByTime = await rowsOf(
      { order: "time", platformIds: "hex24", customerIds: "email" },
      "ids-hex-time",
    );
    const empty = await rowsOf({ customerIds: "empty" }, "ids-empty");
    expect(withoutIds(shapedByTime)).toEqual(withoutIds(own));
    expect(withoutIds(shaped)).toEqual(withoutIds(own));
    expect(empty.every((r) => r[COL.user] === "")).toBe(true);
    expect(empty.map((r) => r[COL.platformUser])).toEqual(own.map((r) => r[COL.platformUser]));

    for (const [col, pattern] of [
      [COL.platformUser, /^[0-9a-f]{24}$/],
      [COL.user, /^member\d{6}@[a-z.]+$/],
    ] as const) {
      // Row by row (same order): a one-to-one spelling, empty exactly where it was empty.
      const forward = new Map<string, string>();
      const backward = new Map<string, string>();
      own.forEach((r, i) => {
        const from = r[col] as string;
        const to = shaped[i]?.[col] as string;
        expect(to === "").toBe(from === "");
        if (from === "") return;
        expect(to).toMatch(pattern);
        expect(forward.get(from) ?? to).toBe(to);
        expect(backward.get(to) ?? from).toBe(from);
        forward.set(from, to);
        backward.set(to, from);
      });
      expect(forward.size).toBeGreaterThan(1000);
    }
  });

  it("gives the same bytes whatever the window the rows are sorted in", async () => {
    const time = createTimeFormatter(540);
    const lineOf = (row: Parameters<typeof formatRow>[0]) =>
      formatRow(row, time, time(row.scheduled_at), row.user_id, row.platform_user_id);
    const write = async (name: string, perTask: boolean, windowRows?: number) => {
      const path = join(dir, `${name}.csv`);
      const file = await openFile(path, "w");
      const sink = new CsvSink(file, undefined);
      await writeInTimeOrder(w, rounds, sink, lineOf, perTask, windowRows);
      await sink.finish();
      await file.close();
      return readFile(path);
    };
    for (const perTask of [false, true]) {
      const whole = await write(`whole-${perTask}`, perTask);
      const cut = await write(`cut-${perTask}`, perTask, 37);
      expect(cut.length).toBeGreaterThan(50_000);
      expect(cut.equals(whole)).toBe(true);
    }
  });

  it("turns the huge campaign into an A/B test with a control group on request", () => {
    const ab = createWorld({ seed: SEED, now: NOW, hugeAbTest: true });
    const plain = w.campaigns.find((c) => c.role === "huge_sends") as SandboxCampaign;
    const huge = ab.campaigns.find((c) => c.role === "huge_sends") as SandboxCampaign;
    expect(huge._id).toBe(plain._id);
    expect(huge.is_ab_test).toBe(true);
    const task = huge.tasks[0];
    expect(task?.rounds.map((r) => r.group)).toEqual(["그룹A", "그룹B", "대조군"]);
    const sends = (c: SandboxCampaign) =>
      c.tasks[0]?.rounds.reduce((n, r) => (r.isControl ? n : n + r.records), 0) ?? 0;
    expect(Math.abs(sends(huge) / sends(plain) - 1)).toBeLessThan(0.05);
    // Every other campaign is unchanged.
    expect(ab.campaigns.filter((c) => c !== huge).map((c) => c.tasks.length)).toEqual(
      w.campaigns.filter((c) => c !== plain).map((c) => c.tasks.length),
    );
  });

  it("takes the shapes as sandbox flags, refusing unknown values", () => {
    expect(
      parseSandboxArgs([
        "--csv-order",
        "time",
        "--csv-platform-ids=hex24",
        "--csv-customer-ids",
        "empty",
        "--huge-ab-test",
      ]),
    ).toEqual({
      csvShape: { order: "time", platformIds: "hex24", customerIds: "empty" },
      hugeAbTest: true,
    });
    expect(() => parseSandboxArgs(["--csv-order", "random"])).toThrow(
      /--csv-order must be one of rounds, time-in-round, time/,
    );
    expect(() => parseSandboxArgs(["--csv-customer-ids"])).toThrow(/needs a value/);
  });
});
