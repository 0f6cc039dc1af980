import { describe, expect, it } from "vitest";
import { EXPORT_MAX_ROUNDS, EXPORT_MAX_SENDS } from "../../src/api/limits.js";
import {
  type HeldExport,
  halves,
  type PlanInput,
  planCampaign,
  SPLIT_AT_HELD_ROUNDS,
  type WindowRound,
} from "../../src/sync/plan.js";

const HOUR = 3_600_000;
const NOW = Date.parse("2026-11-22T00:00:00Z");

/** A round on `date` at 10:00, its deadline a day later, long past NOW unless told. */
function round(date: string, extra: Partial<WindowRound> = {}): WindowRound {
  const at = Date.parse(`${date}T01:00:00Z`);
  return {
    task_id: `tsk_${date}`,
    scheduled_at: `${date} 10:00:00`,
    date,
    deadline: at + 24 * HOUR,
    expected: at + 48 * HOUR,
    sends: 100,
    groups: 1,
    ...extra,
  };
}

function plan(rounds: WindowRound[], held: string[] = [], more: Partial<PlanInput> = {}) {
  return planCampaign({
    rounds,
    held: held.map((date) => ({ task_id: `tsk_${date}`, scheduled_at: `${date} 10:00:00` })),
    exports: [],
    now: NOW,
    cutoff: "2025-01-01",
    ...more,
  });
}

const ranges = (p: ReturnType<typeof plan>) => p.exports.map((e) => `${e.from}..${e.to}`);

describe("which days sync exports for a campaign", () => {
  it("exports nothing for a campaign the history holds whole", () => {
    const p = plan([round("2026-11-01"), round("2026-11-02")], ["2026-11-01", "2026-11-02"]);
    expect(p.exports).toEqual([]);
    expect(p.states.held).toBe(2);
  });

  it("narrows the export to the missing days at the end", () => {
    const days = ["2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04", "2026-11-05"];
    const p = plan(
      days.map((d) => round(d)),
      days.slice(0, 3),
    );
    expect(ranges(p)).toEqual(["2026-11-04..2026-11-05"]);
    expect(p.exports[0]?.missing).toBe(2);
  });

  it("keeps one export across a few held rounds between missing ones", () => {
    const days = ["2026-11-01", "2026-11-02", "2026-11-03"];
    const p = plan(
      days.map((d) => round(d)),
      ["2026-11-02"],
    );
    expect(ranges(p)).toEqual(["2026-11-01..2026-11-03"]);
    expect(p.exports[0]).toMatchObject({ rounds: 3, missing: 2 });
  });

  it(`splits at ${SPLIT_AT_HELD_ROUNDS} or more held rounds between missing ones`, () => {
    const days = ["2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04", "2026-11-05"];
    const held = days.slice(1, 1 + SPLIT_AT_HELD_ROUNDS);
    const p = plan(
      days.map((d) => round(d)),
      held,
    );
    expect(ranges(p)).toEqual([
      "2026-11-01..2026-11-01",
      `2026-11-0${2 + SPLIT_AT_HELD_ROUNDS}..2026-11-0${2 + SPLIT_AT_HELD_ROUNDS}`,
    ]);
  });

  it("matches a held round without a task ID by its scheduled time", () => {
    const p = planCampaign({
      rounds: [round("2026-11-01")],
      held: [{ task_id: null, scheduled_at: "2026-11-01 10:00:00" }],
      exports: [],
      now: NOW,
      cutoff: "2025-01-01",
    });
    expect(p.exports).toEqual([]);
  });

  it("keeps each export within the service's limits on sends and rounds", () => {
    const big = Math.floor(EXPORT_MAX_SENDS / 2) + 1;
    const p = plan(["2026-11-01", "2026-11-02", "2026-11-03"].map((d) => round(d, { sends: big })));
    expect(ranges(p)).toEqual([
      "2026-11-01..2026-11-01",
      "2026-11-02..2026-11-02",
      "2026-11-03..2026-11-03",
    ]);
    const many = Array.from({ length: EXPORT_MAX_ROUNDS + 1 }, (_, i) => {
      const date = new Date(Date.UTC(2026, 5, 1) + i * 86_400_000).toISOString().slice(0, 10);
      return round(date, { sends: 1 });
    });
    const split = plan(many);
    expect(split.exports).toHaveLength(2);
    expect(split.exports.every((e) => e.rounds <= EXPORT_MAX_ROUNDS)).toBe(true);
    expect(split.exports.reduce((n, e) => n + e.missing, 0)).toBe(EXPORT_MAX_ROUNDS + 1);
  });

  it("leaves out rounds before their conversion deadline and before the kept days", () => {
    const p = plan(
      [round("2024-12-30"), round("2026-11-10"), round("2026-11-21", { deadline: NOW + HOUR })],
      [],
    );
    expect(ranges(p)).toEqual(["2026-11-10..2026-11-10"]);
    expect(p.states).toMatchObject({ past_kept_days: 1, pending: 1, missing: 1 });
  });

  it("asks again for a round an export lacked only once its aggregation is expected to be over", () => {
    const r = round("2026-11-20", { deadline: NOW - 2 * HOUR, expected: NOW + 10 * HOUR });
    const covering: HeldExport = {
      fromDate: "2026-11-20",
      toDate: "2026-11-20",
      createdAt: NOW - HOUR,
    };
    expect(plan([r], [], { exports: [covering] }).states.aggregating).toBe(1);
    expect(plan([r], [], { exports: [covering] }).exports).toEqual([]);
    const later = plan([r], [], { exports: [covering], now: NOW + 11 * HOUR });
    expect(ranges(later)).toEqual(["2026-11-20..2026-11-20"]);
  });

  it("stops asking for a round that an export made after its expected aggregation lacked", () => {
    const r = round("2026-11-10");
    const p = plan([r], [], {
      exports: [{ fromDate: null, toDate: null, createdAt: r.expected + HOUR }],
    });
    expect(p.exports).toEqual([]);
    expect(p.states.absent).toBe(1);
  });

  it("does not count an export made before the round's deadline as having looked for it", () => {
    const r = round("2026-11-10");
    const p = plan([r], [], {
      exports: [{ fromDate: "2026-11-01", toDate: "2026-11-30", createdAt: r.deadline - HOUR }],
    });
    expect(ranges(p)).toEqual(["2026-11-10..2026-11-10"]);
  });

  it("plans the same exports for what is left when an earlier one has been added", () => {
    const days = [
      "2026-11-01",
      "2026-11-02",
      "2026-11-06",
      "2026-11-07",
      "2026-11-08",
      "2026-11-09",
      "2026-11-12",
    ];
    const rounds = days.map((d) => round(d));
    const first = plan(rounds, ["2026-11-06", "2026-11-07", "2026-11-08"]);
    expect(first.exports.length).toBe(2);
    const [a, b] = first.exports as [(typeof first.exports)[0], (typeof first.exports)[0]];
    const afterA = plan(rounds, [
      "2026-11-01",
      "2026-11-02",
      "2026-11-06",
      "2026-11-07",
      "2026-11-08",
    ]);
    expect(ranges(afterA)).toEqual([`${b.from}..${b.to}`]);
    const afterB = plan(rounds, [
      "2026-11-06",
      "2026-11-07",
      "2026-11-08",
      "2026-11-09",
      "2026-11-12",
    ]);
    expect(ranges(afterB)).toEqual([`${a.from}..${a.to}`]);
  });
});

describe("halving a range the service refused as too large", () => {
  it("splits the days in two without a gap or an overlap", () => {
    expect(halves({ from: "2026-11-01", to: "2026-11-04" }, "Asia/Seoul")).toEqual([
      { from: "2026-11-01", to: "2026-11-02" },
      { from: "2026-11-03", to: "2026-11-04" },
    ]);
    expect(halves({ from: "2026-11-01", to: "2026-11-02" }, "Asia/Seoul")).toEqual([
      { from: "2026-11-01", to: "2026-11-01" },
      { from: "2026-11-02", to: "2026-11-02" },
    ]);
  });

  it("cannot halve one day", () => {
    expect(halves({ from: "2026-11-01", to: "2026-11-01" }, "Asia/Seoul")).toBeUndefined();
  });
});
