import type { CampaignSummary } from "../analysis/schemas.js";
import { percent } from "../format.js";
import type { Section } from "./model.js";
import { formatP } from "./value-text.js";

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

export function abSection(s: CampaignSummary): Section {
  const groups = s.ab_test?.groups ?? [];
  const section: Section = { id: "ab", title: "A/B test", text: [], charts: [], tables: [] };
  if (groups.length < 2) {
    section.text.push("One send group: no A/B comparison.");
  } else {
    section.charts.push({
      id: "ab-rates",
      title: "Rates by group",
      type: "bar",
      categoryLabel: "Group",
      categories: groups.map((g) => g.group),
      series: [
        { name: "Open rate (users)", values: groups.map((g) => g.open_rate_users) },
        {
          name: "Conversion rate of openers",
          values: groups.map((g) => g.conversion_rate_by_opens),
        },
      ],
      format: "percent",
    });
  }
  const byName = new Map(groups.map((g) => [g.group, g]));
  const categories: string[] = [];
  const est: Array<number | null> = [];
  const low: Array<number | null> = [];
  const high: Array<number | null> = [];
  const verdicts: string[][] = [];
  for (const c of s.ab_test?.comparisons ?? []) {
    const g = byName.get(c.group);
    const others = groups.filter(
      (o) => o.group !== c.group && (c.versus === o.group || !byName.has(c.versus)),
    );
    if (g === undefined || others.length === 0) continue;
    const sum = (f: (x: (typeof groups)[number]) => number) => others.reduce((a, o) => a + f(o), 0);
    const ci =
      c.metric === "open_rate"
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
    const label = `${c.metric === "open_rate" ? "Open rate" : "Conversion rate"}: ${c.group} − ${c.versus}`;
    categories.push(label);
    est.push(ci?.difference ?? null);
    low.push(ci?.low ?? null);
    high.push(ci?.high ?? null);
    verdicts.push([label, percent(c.rate), percent(c.versus_rate), formatP(c.p_value), c.verdict]);
  }
  const control = s.ab_test?.control;
  if (control?.comparison) {
    const received = groups.reduce((a, g) => a + g.received_users, 0);
    const ci = differenceInterval(
      control.converted_users,
      control.assigned_users,
      Math.round(control.send_groups_conversion_rate * received),
      received,
    );
    const label = `Conversion per user: send groups − ${control.comparison.versus}`;
    categories.push(label);
    est.push(ci?.difference ?? null);
    low.push(ci?.low ?? null);
    high.push(ci?.high ?? null);
    verdicts.push([
      label,
      percent(control.comparison.rate),
      percent(control.comparison.versus_rate),
      formatP(control.comparison.p_value),
      control.comparison.verdict,
    ]);
  }
  if (categories.length > 0) {
    section.charts.push({
      id: "ab-difference",
      title: "Difference between groups, with 95% confidence interval",
      type: "interval",
      categoryLabel: "Comparison",
      categories,
      series: [
        { name: "Difference (points)", values: est },
        { name: "Low", values: low },
        { name: "High", values: high },
      ],
      format: "percent",
      note: "An interval that crosses 0 means the file cannot tell the groups apart.",
    });
    section.tables.push({
      caption: "Significance tests (two-proportion z-test)",
      columns: ["Comparison", "Rate", "Versus", "p-value", "Verdict"],
      rows: verdicts,
      numeric: [false, true, true, true, false],
    });
  }
  if (control) section.text.push(control.note);
  return section;
}
