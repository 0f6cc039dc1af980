import type { CampaignSummary } from "../analysis/schemas.js";
import { truncate } from "../format.js";
import { type Baseline, baselineSection, isBaseline } from "./baseline-section.js";
import { abSection } from "./campaign-ab-section.js";
import { counted, fileValue, moneyText, type ReportText } from "./i18n/index.js";
import type { Chart, Kpi, ReportModel, ReportPlace, Section } from "./model.js";
import { fileName, leftOut, notDrawn } from "./value-text.js";

/**
 * The report of a campaign CSV summary: KPIs, funnel per round, the campaign against its
 * channel's recent campaigns (with a baseline), A/B, timing, failures.
 */

/** summarize_export's result of a campaign CSV, with the baseline the history may add. */
export type CampaignReportData = CampaignSummary & { baseline?: Baseline | null };

/** Most categories one chart shows; a note says what is left out. */
export const MAX_ROUNDS_CHARTED = 24;
export const MAX_FAILURE_CODES = 15;

/** A round's bar: its task, when it was scheduled (in the page's locale) and its group. */
function roundLabel(
  t: ReportText,
  r: { task_id: string; scheduled_at: string; group: string },
): string {
  const when = t.f.localTime(r.scheduled_at, true);
  return `${truncate(r.task_id, 14)} ${when}${r.group === "" ? "" : ` ${r.group}`}`;
}

export function campaignReport(
  s: CampaignReportData,
  place: ReportPlace,
  t: ReportText,
): ReportModel {
  const { m, f } = t;
  const c = m.campaign;
  const total = s.totals;
  const sendGroupRevenue = Object.fromEntries(
    (s.revenue?.send_group_by_currency ?? []).map((x) => [x.currency, x.amount]),
  );
  const pct = (v: number | null | undefined) => f.value(v, "percent", m.page.missing);
  const count = (v: number) => f.value(v, "count");
  const kpis: Kpi[] = [
    { label: c.rows, value: count(s.rows) },
    { label: c.sent, value: count(total.sent) },
    {
      label: c.received,
      value: count(total.received),
      note: c.successNote(pct(total.success_rate)),
    },
    { label: c.opens, value: count(total.opens), note: c.ofReceived(pct(total.open_rate)) },
    {
      label: c.sendGroupConversions,
      value: count(total.send_group_conversions ?? total.conversions),
      note: c.ofOpens(pct(total.conversion_rate)),
    },
    { label: c.sendGroupRevenue, value: moneyText(t, sendGroupRevenue) },
  ];
  const sections: Section[] = [
    funnelSection(s, place, t),
    ...(isBaseline(s.baseline) ? [baselineSection(s.baseline, t)] : []),
    abSection(s, t),
    timingSection(s, t),
    failureSection(s, place, t),
  ];
  const first = s.schedule?.first_scheduled_at ?? null;
  const last = s.schedule?.last_scheduled_at ?? first;
  return {
    kind: "campaign_event_data",
    title: c.title(fileName(s.file.path)),
    subtitle: c.subtitle(
      counted(t, s.rows),
      counted(t, s.schedule?.send_rounds ?? s.rounds.length),
      first === null || last === null ? undefined : c.span(f.localTime(first), f.localTime(last)),
    ),
    kpis,
    sections: sections.filter(
      (x) => x.charts.length > 0 || x.tables.length > 0 || x.text.length > 0,
    ),
    notes: [...(s.warnings ?? [])],
  };
}

function funnelSection(s: CampaignSummary, place: ReportPlace, t: ReportText): Section {
  const c = t.m.campaign;
  const rounds = s.rounds.slice(-MAX_ROUNDS_CHARTED);
  const chart: Chart = {
    id: "funnel",
    title: c.funnelChart,
    type: "bar",
    categoryLabel: c.roundAxis,
    categories: rounds.map((r) => roundLabel(t, r)),
    series: [
      { name: c.sent, values: rounds.map((r) => r.sent) },
      { name: c.received, values: rounds.map((r) => r.received) },
      { name: c.failed, values: rounds.map((r) => r.failed), failure: true },
      { name: c.opens, values: rounds.map((r) => r.opens) },
      { name: c.conversions, values: rounds.map((r) => r.conversions) },
    ],
    format: "count",
  };
  // Bars are rounds and groups; the earlier ones left out are counted as what they are: rows of
  // rounds[] (one per round and group) and the send rounds they belong to.
  const earlier = s.rounds.slice(0, s.rounds.length - rounds.length);
  if (earlier.length > 0) {
    const sends = new Set(earlier.map((r) => JSON.stringify([r.task_id, r.scheduled_at]))).size;
    const what = t.m.notes.earlierRounds(counted(t, earlier.length), counted(t, sends));
    chart.note = notDrawn(t, what, place, "summary");
  }
  const when = (v: string | null | undefined) =>
    v === null || v === undefined ? t.m.page.missing : t.f.localTime(v);
  return {
    id: "funnel",
    title: c.funnel,
    text: [
      c.funnelText(
        counted(t, s.schedule?.send_rounds ?? s.rounds.length),
        when(s.schedule?.first_scheduled_at),
        when(s.schedule?.last_scheduled_at),
      ),
    ],
    charts: [chart],
    tables: [],
  };
}

function timingSection(s: CampaignSummary, t: ReportText): Section {
  const c = t.m.campaign;
  const timing = s.timing;
  const section: Section = { id: "timing", title: c.timing, text: [], charts: [], tables: [] };
  if (!timing) return section;
  section.charts.push({
    id: "opens-by-hour",
    title: c.opensByHour(timing.time_zone),
    type: "bar",
    categoryLabel: c.hour,
    categories: timing.opens_by_hour.map((_, h) => String(h).padStart(2, "0")),
    series: [{ name: c.opens, values: timing.opens_by_hour }],
    format: "count",
  });
  const r = timing.receipt_to_first_open;
  if (r.pairs > 0) {
    section.charts.push({
      id: "first-open",
      title: c.firstOpen,
      type: "hbar",
      categoryLabel: c.statistic,
      categories: [c.median, c.p90],
      series: [{ name: c.time, values: [r.median_seconds, r.p90_seconds] }],
      format: "seconds",
      note: c.firstOpenNote(counted(t, r.pairs), counted(t, r.opens_before_receipt)),
    });
  } else {
    section.text.push(c.noFirstOpen);
  }
  return section;
}

function failureSection(s: CampaignSummary, place: ReportPlace, t: ReportText): Section {
  const { m, f } = t;
  const c = m.campaign;
  const section: Section = { id: "failures", title: c.failures, text: [], charts: [], tables: [] };
  const failures = s.failures ?? s.error_codes.map((e) => ({ ...e, sample_message: "" }));
  if (failures.length === 0) {
    section.text.push(c.noFailures);
  } else {
    const shown = failures.slice(0, MAX_FAILURE_CODES);
    const chart: Chart = {
      id: "failures-by-code",
      title: c.failuresByCode,
      type: "hbar",
      categoryLabel: c.errorCode,
      categories: shown.map((x) => fileValue(t, x.error_code)),
      series: [{ name: c.failuresSeries, values: shown.map((x) => x.count), failure: true }],
      format: "count",
    };
    const more = leftOut(
      t,
      failures.length,
      shown.length,
      m.notes.moreErrorCodes,
      place,
      "summary",
    );
    if (more !== undefined) chart.note = more;
    section.charts.push(chart);
    section.tables.push({
      caption: c.samples,
      columns: [c.errorCode, c.failuresSeries, c.sampleMessage],
      rows: shown.map((x) => [
        fileValue(t, x.error_code),
        f.value(x.count, "count"),
        x.sample_message,
      ]),
      numeric: [false, true, false],
    });
  }
  const channels = s.delivery?.by_channel ?? [];
  if (channels.length > 0) {
    const name = (x: { channel: string }) => fileValue(t, x.channel);
    section.charts.push({
      id: "delivery-by-channel",
      title: c.byChannel,
      type: "bar",
      categoryLabel: c.channel,
      categories: channels.map(name),
      series: [
        { name: c.received, values: channels.map((x) => x.received) },
        { name: c.failed, values: channels.map((x) => x.failed), failure: true },
      ],
      format: "count",
      note: channels
        .map((x) => c.channelSuccess(name(x), f.value(x.success_rate, "percent", m.page.missing)))
        .join(", "),
    });
  }
  return section;
}
