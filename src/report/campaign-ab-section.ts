import type { CampaignSummary } from "../analysis/schemas.js";
import type { ReportText } from "./i18n/index.js";
import type { Section } from "./model.js";
import { pCell, verdictLabel } from "./value-text.js";

/** The campaign report's A/B section: rates by group and the 95% interval of each difference. */

const Z95 = 1.959964;

/** The 95% interval of p2 - p1 (Wald, unpooled): what the difference could plausibly be. */
export function differenceInterval(
  x1: number,
  n1: number,
  x2: number,
  n2: number,
): { difference: number; low: number; high: number } | null {
  if (n1 <= 0 || n2 <= 0) return null;
  const p1 = x1 / n1;
  const p2 = x2 / n2;
  const se = Math.sqrt((p1 * (1 - p1)) / n1 + (p2 * (1 - p2)) / n2);
  const d = p2 - p1;
  return { difference: d, low: d - Z95 * se, high: d + Z95 * se };
}

export function abSection(s: CampaignSummary, t: ReportText): Section {
  const { m, f } = t;
  const c = m.campaign;
  const pct = (v: number | null) => f.value(v, "percent", m.page.missing);
  const groups = s.ab_test?.groups ?? [];
  const section: Section = { id: "ab", title: c.ab, text: [], charts: [], tables: [] };
  if (groups.length < 2) {
    section.text.push(c.oneGroup);
  } else {
    section.charts.push({
      id: "ab-rates",
      title: c.ratesByGroup,
      type: "bar",
      categoryLabel: c.group,
      categories: groups.map((g) => g.group),
      series: [
        { name: c.openRateUsers, values: groups.map((g) => g.open_rate_users) },
        { name: c.conversionOfOpeners, values: groups.map((g) => g.conversion_rate_by_opens) },
      ],
      format: "percent",
    });
  }
  const byName = new Map(groups.map((g) => [g.group, g]));
  // A group compared with all the others is named so by the analysis, in its own words.
  const versusName = (versus: string) => (byName.has(versus) ? versus : c.otherGroups);
  const categories: string[] = [];
  const est: Array<number | null> = [];
  const low: Array<number | null> = [];
  const high: Array<number | null> = [];
  const verdicts: string[][] = [];
  for (const comparison of s.ab_test?.comparisons ?? []) {
    const g = byName.get(comparison.group);
    const others = groups.filter(
      (o) =>
        o.group !== comparison.group &&
        (comparison.versus === o.group || !byName.has(comparison.versus)),
    );
    if (g === undefined || others.length === 0) continue;
    const sum = (pick: (x: (typeof groups)[number]) => number) =>
      others.reduce((a, o) => a + pick(o), 0);
    const ci =
      comparison.metric === "open_rate"
        ? differenceInterval(
            sum((o) => o.opened_users),
            sum((o) => o.received_users),
            g.opened_users,
            g.received_users,
          )
        : differenceInterval(
            sum((o) => o.converted_openers),
            sum((o) => o.open_users),
            g.converted_openers,
            g.open_users,
          );
    const label = (comparison.metric === "open_rate" ? c.openRateDiff : c.conversionDiff)(
      comparison.group,
      versusName(comparison.versus),
    );
    categories.push(label);
    est.push(ci?.difference ?? null);
    low.push(ci?.low ?? null);
    high.push(ci?.high ?? null);
    verdicts.push([
      label,
      pct(comparison.rate),
      pct(comparison.versus_rate),
      pCell(t, comparison.p_value),
      verdictLabel(t, comparison.p_value, comparison.significant),
    ]);
  }
  const control = s.ab_test?.control;
  const received = groups.reduce((a, g) => a + g.received_users, 0);
  if (control?.comparison) {
    const ci = differenceInterval(
      control.converted_users,
      control.assigned_users,
      Math.round(control.send_groups_conversion_rate * received),
      received,
    );
    const label = c.controlDiff(control.comparison.versus);
    categories.push(label);
    est.push(ci?.difference ?? null);
    low.push(ci?.low ?? null);
    high.push(ci?.high ?? null);
    verdicts.push([
      label,
      pct(control.comparison.rate),
      pct(control.comparison.versus_rate),
      pCell(t, control.comparison.p_value),
      verdictLabel(t, control.comparison.p_value, control.comparison.significant),
    ]);
  }
  if (categories.length > 0) {
    section.charts.push({
      id: "ab-difference",
      title: c.difference,
      type: "interval",
      categoryLabel: c.comparison,
      categories,
      series: [
        { name: c.differencePoints, values: est },
        { name: c.low, values: low },
        { name: c.high, values: high },
      ],
      format: "percent",
      note: c.crossesZero,
    });
    section.tables.push({
      caption: c.tests,
      columns: [c.comparison, c.rate, c.versus, m.stats.pValue, m.stats.verdict],
      rows: verdicts,
      numeric: [false, true, true, true, false],
    });
  }
  if (control) section.text.push(m.readout.controlNote(control, s.totals));
  return section;
}
