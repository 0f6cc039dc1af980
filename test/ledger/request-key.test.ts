import { describe, expect, it } from "vitest";
import { requestKey, requestKeyDates } from "../../src/ledger/request-key.js";

describe("request key", () => {
  it("is the same for the same request and differs by type, target or dates", () => {
    const base = {
      type: "campaign_event_data",
      targetId: "c1",
      fromDate: "2026-11-01",
      toDate: "2026-11-30",
    } as const;
    expect(requestKey({ ...base })).toBe(requestKey(base));
    const others = [
      { ...base, type: "scenario_daily_metrics" as const },
      { ...base, targetId: "c2" },
      { ...base, fromDate: "2026-11-02" },
      { ...base, toDate: undefined },
    ];
    for (const other of others) expect(requestKey(other)).not.toBe(requestKey(base));
  });

  it("gives back the dates it was made with, and none for an open range", () => {
    const key = requestKey({
      type: "scenario_daily_metrics",
      targetId: "s1",
      fromDate: "2026-10-01",
      toDate: "2026-10-03",
    });
    expect(requestKeyDates(key)).toEqual({ fromDate: "2026-10-01", toDate: "2026-10-03" });
    expect(requestKeyDates(requestKey({ type: "campaign_event_data", targetId: "c1" }))).toEqual(
      {},
    );
    expect(
      requestKeyDates(
        requestKey({ type: "campaign_event_data", targetId: "c1", toDate: "2026-11-30" }),
      ),
    ).toEqual({ toDate: "2026-11-30" });
  });
});
