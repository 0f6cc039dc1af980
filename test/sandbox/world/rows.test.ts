import { describe, expect, it } from "vitest";
import type {
  CampaignRow,
  SandboxCampaign,
  SandboxTask,
} from "../../../src/sandbox/world/types.js";
import { must } from "../../helpers/must.js";
import { campaignWithRole, NOW, OPEN_EVENTS, world } from "./fixtures.js";

const SEND_TYPES = new Set([
  "message_sent",
  "message_received",
  "message_failed",
  "control_assigned",
]);
const w = world();

function windowMs(campaign: SandboxCampaign): number {
  const unit = campaign.conversion.window_unit === "h" ? 3_600_000 : 86_400_000;
  return campaign.conversion.window_amount * unit;
}

/** A handful of tasks of different channels, A/B with control, and small rounds. */
function sampleTasks(): { campaign: SandboxCampaign; task: SandboxTask }[] {
  const picks: { campaign: SandboxCampaign; task: SandboxTask }[] = [];
  for (const campaign of w.campaigns) {
    if (campaign.role === "huge_sends") continue;
    const task = campaign.tasks[campaign.tasks.length - 1];
    if (task !== undefined && task.rounds.reduce((s, r) => s + r.records, 0) <= 5000) {
      picks.push({ campaign, task });
    }
  }
  return picks;
}

/** The contract's user: platform_user_id, or user_id where that is empty. */
const userKey = (row: CampaignRow): string =>
  row.platform_user_id === "" ? `u:${row.user_id}` : `p:${row.platform_user_id}`;

describe("round rows (spec 2.4)", () => {
  const samples = sampleTasks();

  it("covers several channels and an A/B test with a control group", () => {
    expect(new Set(samples.map((s) => s.campaign.channel)).size).toBe(7);
    expect(samples.some((s) => s.task.rounds.some((r) => r.isControl))).toBe(true);
  });

  for (const { campaign, task } of samples) {
    it(`follows row rules 1-4 and the time rules: ${campaign.name}`, () => {
      expect(violations(campaign, task)).toEqual([]);
    });
  }

  it("has unsettled records, failures with awkward carrier text, and both currencies", () => {
    const rows = samples.flatMap(({ task }) =>
      task.rounds.flatMap((r) => [...w.roundRows(task, r)]),
    );
    const count = (type: string) => rows.filter((r) => r.event_type === type).length;
    const sent = count("message_sent");
    expect(sent - count("message_received") - count("message_failed")).toBeGreaterThan(0);
    const failures = rows.filter((r) => r.event_type === "message_failed");
    expect(failures.some((r) => r.error_message.includes("\n"))).toBe(true);
    expect(
      failures.some((r) => r.error_message.includes('"') && r.error_message.includes(",")),
    ).toBe(true);
    expect(
      failures.some((r) => r.error_code === "3018" || r.error_code === "InvalidRegistration"),
    ).toBe(true);
    const currencies = rows
      .filter((r) => r.event_properties.includes('"revenue"'))
      .map((r) => JSON.parse(r.event_properties).currency);
    expect(currencies.filter((c) => c === "KRW").length).toBeGreaterThan(
      currencies.filter((c) => c === "USD").length,
    );
    expect(currencies).toContain("USD");
    expect(rows.some((r) => r.user_id === "")).toBe(true);
    // About 0.5% of records have no linked user (empty platform_user_id, user_id set).
    const sentRows = rows.filter((r) => r.event_type === "message_sent");
    const unlinked = sentRows.filter((r) => r.platform_user_id === "");
    expect(unlinked.length).toBeGreaterThan(0);
    expect(unlinked.length / sentRows.length).toBeGreaterThan(0.002);
    expect(unlinked.length / sentRows.length).toBeLessThan(0.01);
    expect(unlinked.every((r) => r.user_id !== "")).toBe(true);
    // Events may fall after the round's day: up to the conversion deadline.
    expect(rows.some((r) => r.captured_at - r.scheduled_at > 86_400_000)).toBe(true);
  });

  it("gives control users conversions without any message", () => {
    const abCampaigns = w.campaigns.filter((c) =>
      c.tasks.some((t) => t.rounds.some((r) => r.isControl)),
    );
    let conversions = 0;
    for (const campaign of abCampaigns) {
      for (const task of campaign.tasks) {
        for (const round of task.rounds.filter((r) => r.isControl)) {
          for (const row of w.roundRows(task, round)) {
            if (row.event_type === campaign.conversion.event_type) conversions++;
          }
        }
      }
    }
    expect(conversions).toBeGreaterThan(0);
  });

  it("gives A/B groups of a task disjoint users", () => {
    const campaign = campaignWithRole(w, "many_rounds");
    const task = campaign.tasks[5] as SandboxTask;
    const [a, b] = task.rounds.map((round) => new Set([...w.roundRows(task, round)].map(userKey)));
    const groupA = must(a, "first A/B group");
    const groupB = must(b, "second A/B group");
    expect(groupA.size).toBeGreaterThan(0);
    expect(groupB.size).toBeGreaterThan(0);
    expect([...groupA].filter((u) => groupB.has(u))).toEqual([]);
  });
});

/**
 * Checks every row of a task against the spec's row rules and the sandbox's time rules; returns
 * readable violations (plain checks: an `expect` per row would make the test slow).
 */
function violations(campaign: SandboxCampaign, task: SandboxTask): string[] {
  const problems: string[] = [];
  const check = (ok: boolean, what: string, row?: CampaignRow) => {
    if (!ok && problems.length < 20)
      problems.push(`${what}${row ? `: ${JSON.stringify(row)}` : ""}`);
  };
  const openEvent = OPEN_EVENTS[campaign.channel];
  const conversion = campaign.conversion.event_type;
  for (const round of task.rounds) {
    // Group rows per user, keeping file order: a record's rows come together.
    const byUser = new Map<string, CampaignRow[]>();
    let previousUser = "";
    for (const row of w.roundRows(task, round)) {
      check(row.task_id === task._id && row.scheduled_at === task.scheduled_at, "round id", row);
      check(row.group === round.group, "group", row);
      // A record with no linked user has an empty platform_user_id and is known by user_id.
      if (row.platform_user_id === "") {
        check(/^u_\d{6}$/.test(row.user_id), "unlinked record keeps user_id", row);
      } else {
        check(/^pu_\d{6}$/.test(row.platform_user_id), "platform_user_id", row);
        check(
          row.user_id === "" || row.user_id === `u_${row.platform_user_id.slice(3)}`,
          "user_id",
          row,
        );
      }
      check(row.captured_at < NOW, "captured before now", row);
      const user = userKey(row);
      if (user !== previousUser) {
        // Users are distinct within a round, so a user's rows never resume later.
        check(!byUser.has(user), "record rows together", row);
        previousUser = user;
      }
      const list = byUser.get(user) ?? [];
      list.push(row);
      byUser.set(user, list);
    }
    check(byUser.size === round.records, `one user per record in ${round.group}`);
    for (const userRows of byUser.values()) {
      const first = userRows[0] as CampaignRow;
      const created = first.captured_at;
      const deadline = created + windowMs(campaign);
      if (round.isControl) {
        // Rule 4: one control_assigned row, channel control, no message rows.
        check(
          first.event_type === "control_assigned" && first.channel === "control",
          "control row",
          first,
        );
        for (const row of userRows.slice(1)) {
          check(row.event_type === conversion, "control users only convert", row);
          check(row.captured_at <= deadline, "control conversion in window", row);
        }
        continue;
      }
      // Rule 1: one message_sent row, at most one result row, right after it.
      check(
        first.event_type === "message_sent" && first.channel === campaign.channel,
        "sent first",
        first,
      );
      check(
        first.captured_at >= task.sent_at && first.captured_at < task.sent_at + 1_800_000,
        "send time",
        first,
      );
      const sendRows = userRows.filter((r) => SEND_TYPES.has(r.event_type));
      check(sendRows.length === 1 || sendRows.length === 2, "one or two send-record rows", first);
      for (const row of sendRows) {
        check(
          row.event_properties === "{}" &&
            row.custom_event_properties === "{}" &&
            row.internal_event_properties === "{}",
          "send rows carry {}",
          row,
        );
      }
      const result = sendRows[1];
      if (result !== undefined) {
        check(userRows[1] === result && result.captured_at >= created, "result after send", result);
        if (result.event_type === "message_failed") {
          check(
            result.error_code !== "" && result.error_message !== "",
            "failure code and text",
            result,
          );
        } else {
          check(result.event_type === "message_received", "result type", result);
          check(
            result.error_code === "" && result.error_message === "",
            "no error on receipt",
            result,
          );
        }
      }
      const events = userRows.slice(sendRows.length);
      if (events.length > 0)
        check(result?.event_type === "message_received", "events need a receipt", first);
      let opened = false;
      let last = result?.captured_at ?? created;
      for (const event of events) {
        check(event.channel === "" && event.error_code === "", "event rows have no channel", event);
        check(
          event.captured_at >= last && event.captured_at <= deadline,
          "event time order and deadline",
          event,
        );
        last = event.captured_at;
        JSON.parse(event.event_properties);
        for (const extra of [event.custom_event_properties, event.internal_event_properties]) {
          if (extra !== "") JSON.parse(extra);
        }
        if (event.event_type === openEvent) opened = true;
        else if (event.event_type === "landing_clicked") {
          check(opened, "landing after an open", event);
          check(
            typeof JSON.parse(event.event_properties).click_target === "string",
            "click_target",
            event,
          );
        } else {
          check(event.event_type === conversion, "known event type", event);
          // Conversions only by users who opened, with a payment.
          check(opened, "conversion after an open", event);
          const payment = JSON.parse(event.event_properties);
          check(payment.revenue > 0 && ["KRW", "USD"].includes(payment.currency), "payment", event);
          check(/^p_\d{3}$/.test(payment.item_ids[0]), "payment item", event);
        }
      }
    }
  }
  return problems;
}
