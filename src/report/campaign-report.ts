import { roundRowsPhrase } from "../analysis/round-rows.js";
import type { CampaignSummary } from "../analysis/schemas.js";
import { formatCount, money, percent, truncate } from "../format.js";
import { abSection } from "./campaign-ab-section.js";
import type { Chart, Kpi, ReportModel, ReportPlace, Section } from "./model.js";
import { fileName, leftOut, notDrawn } from "./value-text.js";

/** The report of a campaign CSV summary: KPIs, funnel per round, A/B, timing, failures. */

/** Most categories one chart shows; a note says what is left out. */
export const MAX_ROUNDS_CHARTED = 24;
export const MAX_FAILURE_CODES = 15;

function roundLabel(r: { task_id: string; scheduled_at: string; group: string }): string {
  const when = r.scheduled_at.slice(5, 16);
  return `${truncate(r.task_id, 14)} ${when}${r.group === "" ? "" : ` ${r.group}`}`;
}

export function campaignReport(s: CampaignSummary, place: ReportPlace): ReportModel {
  const t = s.totals;
  const sendGroupRevenue = Object.fromEntries(
    (s.revenue?.send_group_by_currency ?? []).map((c) => [c.currency, c.amount]),
  );
  const kpis: Kpi[] = [
    { label: "Rows", value: formatCount(s.rows) },
    { label: "Sent", value: formatCount(t.sent) },
    {
      label: "Received",
      value: formatCount(t.received),
      note: `${percent(t.success_rate)} success`,
    },
    { label: "Opens", value: formatCount(t.opens), note: `${percent(t.open_rate)} of received` },
    {
      label: "Conversions (send groups)",
      value: formatCount(t.send_group_conversions ?? t.conversions),
      note: `${percent(t.conversion_rate)} of opens`,
    },
    { label: "Revenue (send groups)", value: money(sendGroupRevenue) },
  ];
  const sections: Section[] = [
    funnelSection(s, place),
    abSection(s),
    timingSection(s),
    failureSection(s, place),
  ];
  return {
    kind: "campaign_event_data",
    title: `Campaign export: ${fileName(s.file.path)}`,
    subtitle: s.summary,
    kpis,
    sections: sections.filter(
      (x) => x.charts.length > 0 || x.tables.length > 0 || x.text.length > 0,
    ),
    notes: s.warnings,
  };
}

function funnelSection(s: CampaignSummary, place: ReportPlace): Section {
  const rounds = s.rounds.slice(-MAX_ROUNDS_CHARTED);
  const chart: Chart = {
    id: "funnel",
    title: "Delivery funnel per round and group",
    type: "bar",
    categoryLabel: "Round (task, scheduled, group)",
    categories: rounds.map(roundLabel),
    series: [
      { name: "Sent", values: rounds.map((r) => r.sent) },
      { name: "Received", values: rounds.map((r) => r.received) },
      { name: "Failed", values: rounds.map((r) => r.failed) },
      { name: "Opens", values: rounds.map((r) => r.opens) },
      { name: "Conversions", values: rounds.map((r) => r.conversions) },
    ],
    format: "count",
  };
  // Bars are rounds and groups; the earlier ones left out are counted as what they are.
  const earlier = s.rounds.slice(0, s.rounds.length - rounds.length);
  if (earlier.length > 0) {
    chart.note = notDrawn(`the earlier ${roundRowsPhrase(earlier)}`, place, "summary");
  }
  return {
    id: "funnel",
    title: "Delivery funnel",
    text: [
      `${formatCount(s.schedule?.send_rounds ?? s.rounds.length)} send round(s) from ${s.schedule?.first_scheduled_at ?? "-"} to ${s.schedule?.last_scheduled_at ?? "-"}; counts are event rows.`,
    ],
    charts: [chart],
    tables: [],
  };
}

function timingSection(s: CampaignSummary): Section {
  const timing = s.timing;
  const section: Section = {
    id: "timing",
    title: "When people open",
    text: [],
    charts: [],
    tables: [],
  };
  if (!timing) return section;
  section.charts.push({
    id: "opens-by-hour",
    title: `Opens by hour of day (${timing.time_zone})`,
    type: "bar",
    categoryLabel: "Hour",
    categories: timing.opens_by_hour.map((_, h) => String(h).padStart(2, "0")),
    series: [{ name: "Opens", values: timing.opens_by_hour }],
    format: "count",
  });
  const r = timing.receipt_to_first_open;
  if (r.pairs > 0) {
    section.charts.push({
      id: "first-open",
      title: "Time from receipt to first open",
      type: "hbar",
      categoryLabel: "Statistic",
      categories: ["Median", "90th percentile"],
      series: [{ name: "Time", values: [r.median_seconds, r.p90_seconds] }],
      format: "seconds",
      note: `${formatCount(r.pairs)} users who received and opened${r.opens_before_receipt > 0 ? `; ${formatCount(r.opens_before_receipt)} opens logged before their receipt were left out` : ""}.`,
    });
  } else {
    section.text.push("No user both received and opened a message: no time to first open.");
  }
  return section;
}

function failureSection(s: CampaignSummary, place: ReportPlace): Section {
  const section: Section = { id: "failures", title: "Failures", text: [], charts: [], tables: [] };
  const failures = s.failures ?? s.error_codes.map((e) => ({ ...e, sample_message: "" }));
  if (failures.length === 0) {
    section.text.push("No failed sends.");
  } else {
    const shown = failures.slice(0, MAX_FAILURE_CODES);
    const chart: Chart = {
      id: "failures-by-code",
      title: "Failures by error code",
      type: "hbar",
      categoryLabel: "Error code",
      categories: shown.map((f) => f.error_code || "(none)"),
      series: [{ name: "Failures", values: shown.map((f) => f.count) }],
      format: "count",
    };
    const more = leftOut(failures.length, shown.length, "error codes", place, "summary");
    if (more !== undefined) chart.note = more;
    section.charts.push(chart);
    section.tables.push({
      caption: "Error codes with a sample message (carrier text)",
      columns: ["Error code", "Failures", "Sample message"],
      rows: shown.map((f) => [f.error_code || "(none)", formatCount(f.count), f.sample_message]),
      numeric: [false, true, false],
    });
  }
  const channels = s.delivery?.by_channel ?? [];
  if (channels.length > 0) {
    section.charts.push({
      id: "delivery-by-channel",
      title: "Delivery by channel",
      type: "bar",
      categoryLabel: "Channel",
      categories: channels.map((c) => c.channel || "(none)"),
      series: [
        { name: "Received", values: channels.map((c) => c.received) },
        { name: "Failed", values: channels.map((c) => c.failed) },
      ],
      format: "count",
      note: channels
        .map((c) => `${c.channel || "(none)"} ${percent(c.success_rate)} success`)
        .join(", "),
    });
  }
  return section;
}
