import { formatCount, percent } from "../../format.js";
import { U64Map } from "../csv/hash-table.js";
import { ROLE_NAMES } from "../event-roles.js";
import { safeText } from "../safe-text.js";
import type { CampaignRound, CampaignSummary } from "../schemas.js";
import { quantileSorted, ratio, round6 } from "../stats.js";
import { abReadout, type RoundDerived } from "./ab-readout.js";
import { CONTROL_GROUP, MAX_KEY_BYTES } from "./columns.js";
import { distinctOver } from "./distinct-users.js";
import { NO_TIME } from "./local-time.js";
import { AMOUNT_KEYS, amountOf, CURRENCY_KEYS, type CurrencySums, mostUsed } from "./revenue.js";
import { roundsPhrase, scheduleOf } from "./send-rounds.js";
import type { CampaignTally } from "./tally.js";

/**
 * The campaign summary's result: the contract's fields and the notes, built from the row pass's
 * tally. Lists come in an order of their own (rounds by time, task and group; event types and
 * channels by count), never the file's, so any order of the same rows reads the same.
 */

export interface CampaignFile {
  path: string;
  bytes: number;
  conversionType: string | undefined;
  timeZone: string;
}

/** Code-unit order: the same on every machine (localeCompare is not). */
function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function campaignResult(tally: CampaignTally, file: CampaignFile): CampaignSummary {
  const input = {
    ...tally,
    ...file,
    receivedUsers: distinctOver(tally.rounds, (r) => r.receipts),
    openUsers: distinctOver(tally.rounds, (r) => r.firstOpen),
    clickUsers: distinctOver(tally.rounds, (r) => r.clickUsers),
    conversionUsers: distinctOver(tally.rounds, (r) => r.conversionUsers),
  };
  // Receipt-to-open seconds, at most one per opening user: a typed array sorts natively (no
  // comparator calls) and holds no boxed numbers.
  let deltaSpace = 0;
  for (const r of input.rounds) deltaSpace += r.firstOpen.size;
  // Whole seconds from a receipt to a later open of two 32-bit times: below 2^32, so they sort as
  // 32-bit integers, half the bytes of doubles.
  const deltaSlots = new Uint32Array(deltaSpace);
  let pairs = 0;
  let opensBeforeReceipt = 0;
  const rounds = [...input.rounds].sort(
    (a, b) =>
      byText(a.scheduled_at, b.scheduled_at) ||
      byText(a.rawTask, b.rawTask) ||
      byText(a.rawGroup, b.rawGroup),
  );
  const derived: RoundDerived[] = rounds.map((r) => {
    let openedReceived = 0;
    r.firstOpen.forEach((hi, lo, openAt) => {
      const receivedAt = r.receipts.get(hi, lo, NO_TIME);
      if (receivedAt === NO_TIME) return;
      openedReceived++;
      if (openAt === 2147483647 || receivedAt === 2147483647) return;
      if (openAt < receivedAt) opensBeforeReceipt++;
      else deltaSlots[pairs++] = openAt - receivedAt;
    });
    let convertedOpeners = 0;
    let convertedReceived = 0;
    let controlConverted = 0;
    r.conversionUsers.forEach((hi, lo) => {
      if (r.firstOpen.has(hi, lo)) convertedOpeners++;
      if (r.receipts.has(hi, lo)) convertedReceived++;
      if (r.controlUsers.has(hi, lo)) controlConverted++;
    });
    const receivedUsers = r.receipts.size;
    const openUsers = r.firstOpen.size;
    const round: CampaignRound = {
      task_id: r.task_id,
      scheduled_at: r.scheduled_at,
      group: r.group,
      sent: r.sent,
      received: r.received,
      failed: r.failed,
      unsettled: r.sent - r.received - r.failed,
      control_assigned: r.control,
      opens: r.opens,
      open_users: openUsers,
      clicks: r.clicks,
      click_users: r.clickUsers.size,
      conversions: r.conversions,
      conversion_users: r.conversionUsers.size,
      success_rate: round6(ratio(r.received, r.received + r.failed)),
      received_users: receivedUsers,
      open_rate: round6(ratio(r.opens, r.received)),
      open_rate_users: round6(ratio(openUsers, receivedUsers)),
      conversion_rate: round6(ratio(r.conversions, r.opens)),
      channels: [...r.channels].map((id) => input.channels.items[id]?.shown ?? "").sort(byText),
    };
    return {
      round,
      openedReceived,
      convertedOpeners,
      convertedReceived,
      controlUsers: r.controlUsers.size,
      controlConverted,
    };
  });

  const sum = (f: (r: CampaignRound) => number): number =>
    derived.reduce((acc, d) => acc + f(d.round), 0);
  const sent = sum((r) => r.sent);
  const received = sum((r) => r.received);
  const failed = sum((r) => r.failed);
  const opens = sum((r) => r.opens);
  const conversions = sum((r) => r.conversions);
  const controlConversions = derived
    .filter((d) => d.round.group === CONTROL_GROUP)
    .reduce((acc, d) => acc + d.round.conversions, 0);
  // Distinct converted users of the send groups: a control user never got a message, so the
  // headline counts only those who did (the contract's conversion_users stays file-wide).
  let sendConversions = 0;
  for (const r of rounds) if (r.group !== CONTROL_GROUP) sendConversions += r.conversionUsers.size;
  // Room for them all at once: grown from a few slots, it was rebuilt a dozen times.
  const sendConverters = U64Map.forEntries(sendConversions, false);
  for (const r of rounds) {
    if (r.group === CONTROL_GROUP) continue;
    r.conversionUsers.forEach((hi, lo) => {
      sendConverters.add(hi, lo);
    });
  }
  const totals: CampaignSummary["totals"] = {
    sent,
    received,
    failed,
    unsettled: sent - received - failed,
    control_assigned: sum((r) => r.control_assigned),
    opens,
    open_users: input.openUsers,
    clicks: sum((r) => r.clicks),
    click_users: input.clickUsers,
    conversions,
    conversion_users: input.conversionUsers,
    success_rate: round6(ratio(received, received + failed)),
    received_users: input.receivedUsers,
    open_rate: round6(ratio(opens, received)),
    open_rate_users: round6(ratio(input.openUsers, input.receivedUsers)),
    // Control-group conversions have no opens behind them: they stay in `conversions` (the
    // contract's row count) but not in the rate by opens.
    conversion_rate: round6(ratio(conversions - controlConversions, opens)),
    send_group_conversions: conversions - controlConversions,
    send_group_conversion_users: sendConverters.size,
    control_conversions: controlConversions,
  };

  const errorList = [...input.errorCodes.entries()].sort(
    (a, b) => b[1].count - a[1].count || byText(a[0], b[0]),
  );

  const eventTypes = input.eventTypes.items
    .map((item) => ({
      event_type: item.shown,
      count: input.eventCounts[item.id] ?? 0,
      role: ROLE_NAMES[input.eventRoles[item.id] ?? 7] ?? "other",
      name: item.name,
    }))
    .sort((a, b) => b.count - a.count || byText(a.name, b.name))
    .map(({ name: _name, ...shown }) => shown);
  const conversionTypes = eventTypes
    .filter((t) => t.role === "conversion")
    .map((t) => t.event_type);
  let conversionNote: string;
  if (input.conversionType !== undefined) {
    const asked = safeText(input.conversionType, MAX_KEY_BYTES);
    conversionNote = conversionTypes.length
      ? `Conversions are rows of "${asked}", as requested.`
      : `No row has the requested conversion event type "${asked}"; event types in the file: ${listed(eventTypes.map((t) => t.event_type)) || "none"}.`;
  } else {
    conversionNote = conversionTypes.length
      ? `Conversion event type inferred as ${listed(conversionTypes.map((t) => `"${t}"`))} (every type that is not a send-record, open or landing_clicked event); pass conversion_event_type to choose one.`
      : "No conversion events in the file (no event type besides send records, opens and landing clicks).";
  }

  const byChannel = input.channels.items
    .map((item) => {
      const acc = input.channelAcc[item.id] ?? { sent: 0, received: 0, failed: 0 };
      return {
        name: item.name,
        channel: item.shown || "(empty)",
        sent: acc.sent,
        received: acc.received,
        failed: acc.failed,
        success_rate: round6(ratio(acc.received, acc.received + acc.failed)),
      };
    })
    .sort((a, b) => b.sent - a.sent || byText(a.name, b.name))
    .map(({ name: _name, ...shown }) => shown);

  const amountKey = mostUsed(input.revenue.amountKeys, AMOUNT_KEYS);
  const currencyKey = mostUsed(input.revenue.currencyKeys, CURRENCY_KEYS);
  const byCurrency = currencyList(input.revenue.byCurrency);
  const revenueNote =
    conversions === 0
      ? "No conversion events, so no revenue."
      : amountKey === null
        ? `No amount found in the conversion events' properties (looked for keys ${AMOUNT_KEYS.join(", ")}).`
        : `Amounts read from the "${amountKey}" property${currencyKey ? `, currency from "${currencyKey}"` : ", with no currency property (listed as (none))"}; amounts are never added across currencies.${
            controlConversions > 0
              ? ` by_currency covers every conversion row in the file, the control group's ${formatCount(controlConversions)} included (users who got no message); send_group_by_currency and control_by_currency split it by group.`
              : ""
          }`;

  const deltas = deltaSlots.subarray(0, pairs).sort();
  const ab = abReadout(derived);

  const result: CampaignSummary = {
    kind: "campaign_event_data",
    summary: "",
    rows: input.rows,
    rounds: derived.map((d) => d.round),
    totals,
    error_codes: errorList.map(([error_code, v]) => ({ error_code, count: v.count })),
    file: { path: input.path, bytes: input.bytes },
    event_types: eventTypes,
    conversion_event_type: {
      types: conversionTypes,
      source: input.conversionType !== undefined ? "input" : "inferred",
      note: conversionNote,
    },
    delivery: {
      success_rate: totals.success_rate,
      unsettled: totals.unsettled,
      by_channel: byChannel,
    },
    failures: errorList.map(([error_code, v]) => ({
      error_code,
      count: v.count,
      sample_message: v.sample,
    })),
    revenue: {
      amount_key: amountKey,
      currency_key: currencyKey,
      by_currency: byCurrency,
      send_group_by_currency: currencyList(input.revenue.sendGroups),
      control_by_currency: currencyList(input.revenue.controlGroup),
      unparsed_properties: input.revenue.unparsed,
      note: revenueNote,
    },
    schedule: scheduleOf(derived.map((d) => d.round)),
    ab_test: ab,
    timing: {
      time_zone: input.timeZone,
      receipt_to_first_open: {
        pairs: deltas.length,
        median_seconds: quantileSorted(deltas, 0.5),
        p90_seconds: quantileSorted(deltas, 0.9),
        opens_before_receipt: opensBeforeReceipt,
      },
      opens_by_hour: input.opensByHour,
    },
    unidentified_rows: input.unidentified,
    warnings: input.warnings,
  };
  result.summary = oneLine(result);
  return result;
}

function currencyList(sums: CurrencySums): CampaignSummary["revenue"]["by_currency"] {
  return [...sums.entries()]
    .map(([currency, v]) => ({
      currency,
      amount: round6(amountOf(v.micros)),
      conversions: v.conversions,
    }))
    .sort((a, b) => b.conversions - a.conversions || byText(a.currency, b.currency));
}

/** A list for a note, kept short: the structured result has the full list. */
function listed(items: string[], max = 12): string {
  const shown = items.slice(0, max).join(", ");
  return items.length > max ? `${shown} and ${items.length - max} more` : shown;
}

function oneLine(s: CampaignSummary): string {
  const t = s.totals;
  const parts = [
    `${formatCount(s.rows)} rows, ${roundsPhrase(s)}`,
    `${formatCount(t.sent)} sent, ${percent(t.success_rate)} delivered (${formatCount(t.failed)} failed, ${formatCount(t.unsettled)} unsettled)`,
    `open rate ${percent(t.open_rate)} (건) / ${percent(t.open_rate_users)} (명)`,
    `${formatCount(t.send_group_conversions)} send-group conversions (${percent(t.conversion_rate)} of opens)${
      t.control_conversions > 0
        ? ` + ${formatCount(t.control_conversions)} in the control group`
        : ""
    }`,
  ];
  const top = s.error_codes[0];
  if (top) parts.push(`top failure ${top.error_code} (${formatCount(top.count)})`);
  const winner = s.ab_test.comparisons.find((c) => c.metric === "open_rate");
  if (winner) parts.push(winner.verdict);
  return parts.join("; ");
}
