import { readoutEn } from "../../analysis/i18n/readout-en.js";

/**
 * Every word of the report page and the MCP App view, in English. ko.ts has the same keys (its
 * type is this object's); a sentence with a figure or a name in it is a function, so each
 * language puts the parts in its own order. Figures come in already written by Intl (Count
 * carries the number too, for English plurals).
 */

/** A count as written for the page, and the number behind it (for plurals). */
export interface Count {
  n: number;
  text: string;
}

function plural(c: Count, one: string, many = `${one}s`): string {
  return `${c.text} ${c.n === 1 ? one : many}`;
}

export const en = {
  page: {
    title: (heading: string) => `${heading} – crm-insights-mcp report`,
    waiting: "Waiting for a tool result…",
    working: "Working on it: the chart appears when the tool returns.",
    cancelled: "The tool call was cancelled.",
    toolFailed: "The tool call failed.",
    noStructured: "The tool result has no structured data to draw.",
    noData:
      "No data: this page draws a tool result inside an MCP Apps host, or data written into it by `crm-insights-mcp report FILE --out PATH.html`.",
    badEmbedded: (error: string) => `The embedded report data is not valid JSON: ${error}`,
    cannotDraw: (error: string) => `Cannot draw this result: ${error}`,
    noHost: (error: string) => `Could not connect to the host: ${error}`,
    noReportData: "No report data: expected the structuredContent of a tool result.",
    unknownData:
      "Unknown report data: expected the result of summarize_export or campaign_metrics, or an answer of query_export.",
    theme: "Light / dark",
    chart: "Chart",
    table: "Table",
    chartLabel: (title: string) => `${title}. The same data is in the table view.`,
    viewsLabel: (title: string) => `View of ${title}`,
    warnings: "Warnings",
    missing: "-",
    /** The analysis' marks for a value the file left empty: an error code, a currency. */
    none: "(none)",
    /** ... and a channel. */
    empty: "(empty)",
  },
  notes: {
    /** What a chart leaves out (`what`), and where the whole list is (`where`). */
    notDrawn: (what: string, where: string) => `Not drawn: ${what}; ${where}.`,
    whereView: "the tool result has them all",
    whereSummary: "`crm-insights-mcp summarize --json` on the export prints them all",
    whereMetrics: "a campaign_metrics call for the same window returns them all",
    /** Rows of rounds[] left out: one per round and group, and the send rounds they belong to. */
    earlierRounds: (rows: Count, sends: Count) =>
      rows.n === sends.n
        ? `the earlier ${plural(sends, "send round")}`
        : `the earlier ${plural(rows, "round-and-group row")} of ${plural(sends, "send round")}`,
    moreErrorCodes: (n: Count) => `${n.text} more error codes`,
    moreCampaigns: (n: Count) => `${n.text} more campaigns`,
    /** A list cut by the tool-result budget: `field` shown of total. */
    cutList: (field: string, shown: Count, total: Count) =>
      `${field} ${shown.text} of ${total.text}`,
    budget: (lists: string[], resource: string | undefined) =>
      `This result was cut to fit the tool-result budget${lists.length === 0 ? "" : ` (${lists.join(", ")})`}, so some charts show part of the data${resource === undefined ? "" : `; the whole result is the resource ${resource}`}.`,
  },
  stats: {
    ciLow: "95% CI low",
    ciHigh: "95% CI high",
    pValue: "p-value",
    /** The p-value as a table cell: below 0.001 (`small`) it is only said to be smaller. */
    pCell: (value: string, small: boolean) => (small ? `< ${value}` : value),
    /** The p-value in a sentence. */
    pText: (value: string, small: boolean) => (small ? `p < ${value}` : `p = ${value}`),
    verdict: "Verdict",
  },
  campaign: {
    title: (file: string) => `Campaign export: ${file}`,
    subtitle: (rows: Count, rounds: Count, span: string | undefined) =>
      `${plural(rows, "row")}, ${plural(rounds, "send round")}${span === undefined ? "" : `, ${span}`}`,
    span: (first: string, last: string) => (first === last ? first : `${first} to ${last}`),
    rows: "Rows",
    sent: "Sent",
    received: "Received",
    failed: "Failed",
    opens: "Opens",
    conversions: "Conversions",
    successNote: (rate: string) => `${rate} success`,
    ofReceived: (rate: string) => `${rate} of received`,
    sendGroupConversions: "Conversions (send groups)",
    ofOpens: (rate: string) => `${rate} of opens`,
    sendGroupRevenue: "Revenue (send groups)",
    funnel: "Delivery funnel",
    funnelChart: "Delivery funnel per round and group",
    roundAxis: "Round (task, scheduled, group)",
    funnelText: (rounds: Count, first: string, last: string) =>
      `${rounds.text} send round(s) from ${first} to ${last}; counts are event rows.`,
    ab: "A/B test",
    oneGroup: "One send group: no A/B comparison.",
    ratesByGroup: "Rates by group",
    group: "Group",
    openRateUsers: "Open rate (users)",
    conversionOfOpeners: "Conversion rate of openers",
    otherGroups: "the other groups",
    openRateDiff: (group: string, versus: string) => `Open rate: ${group} − ${versus}`,
    conversionDiff: (group: string, versus: string) => `Conversion rate: ${group} − ${versus}`,
    controlDiff: (control: string) => `Conversion per user: send groups − ${control}`,
    difference: "Difference between groups, with 95% confidence interval",
    comparison: "Comparison",
    differencePoints: "Difference (points)",
    low: "Low",
    high: "High",
    crossesZero: "An interval that crosses 0 means the file cannot tell the groups apart.",
    tests: "Significance tests (two-proportion z-test)",
    rate: "Rate",
    versus: "Versus",
    timing: "When people open",
    opensByHour: (zone: string) => `Opens by hour of day (${zone})`,
    hour: "Hour",
    firstOpen: "Time from receipt to first open",
    statistic: "Statistic",
    median: "Median",
    p90: "90th percentile",
    time: "Time",
    firstOpenNote: (pairs: Count, early: Count) =>
      `${pairs.text} users who received and opened${early.n > 0 ? `; ${early.text} opens logged before their receipt were left out` : ""}.`,
    noFirstOpen: "No user both received and opened a message: no time to first open.",
    failures: "Failures",
    noFailures: "No failed sends.",
    failuresByCode: "Failures by error code",
    errorCode: "Error code",
    failuresSeries: "Failures",
    samples: "Error codes with a sample message (carrier text)",
    sampleMessage: "Sample message",
    byChannel: "Delivery by channel",
    channel: "Channel",
    channelSuccess: (channel: string, rate: string) => `${channel} ${rate} success`,
  },
  scenario: {
    title: (file: string) => `Scenario export: ${file}`,
    subtitle: (nodes: Count, days: Count, span: string | undefined) =>
      `${plural(nodes, "message node")}${days.n > 0 ? `, ${plural(days, "day")}` : ""}${span === undefined ? "" : `, ${span}`}`,
    span: (first: string, last: string) => (first === last ? first : `${first} to ${last}`),
    nodes: "Message nodes",
    sends: "Sends",
    openRate: "Open rate (건)",
    conversions: "Conversions",
    conversionRate: "Conversion rate (건)",
    ofOpens: "of opens",
    revenue: "Revenue",
    daily: "Daily trend per node",
    noDaily: "No daily sheets to draw.",
    date: "Date",
    fewerNodes: (n: Count) => `${n.text} node(s) with fewer sends not drawn`,
    earlierDays: (n: Count) => `${n.text} earlier day(s) not drawn`,
    /** The notes above, joined into one. */
    dailyNote: (parts: string[]) => `${parts.join("; ")}.`,
    sendsPerDay: "Sends per day (발송 수)",
    openRatePerDay: "Open rate per day (오픈 수 / 발송 수)",
    conversionsPerDay: "Conversions per day (전환 수)",
    branches: "Branches: A against B",
    noBranches: "The scenario has no A/B branch.",
    armRates: (parent: string) => `Open rate by arm${parent === "" ? "" : ` under ${parent}`}`,
    arm: "Arm",
    openRateUsers: "Open rate (명)",
    conversionRateCases: "Conversion rate (건)",
    leads: (arm: string, verdict: string, p: string | undefined) =>
      `Highest open rate by users (명): ${arm}. ${verdict}${p === undefined ? "" : `, ${p}`}.`,
    tie: (arms: string[]) => `${arms.join(" and ")} tie on open rate by users (명).`,
    noSends: (arms: string[]) => `No sends in ${arms.join(" or ")} yet.`,
    moreBranches: (n: Count) =>
      `Not drawn as charts: ${n.text} more branch point(s); the table below has them all.`,
    armsCompared: "Arms compared (two-proportion z-test on open rate by users)",
    branchPoint: "Branch point",
    top: "(top)",
    everyNode: "Every node of the summary sheet, in file order",
    number: "#",
    channel: "Channel",
    branch: "Branch",
    node: "Node",
    days: "Days",
    check: "Check",
    checkOk: "ok",
    checkDiffers: (n: Count) => `${n.text} differ`,
  },
  metrics: {
    title: "Campaign metrics",
    window: (from: string, to: string) => `Window ${from} – ${to} KST (end exclusive)`,
    campaigns: "Campaigns",
    rounds: "Rounds",
    sent: "Sent",
    received: "Received",
    openRate: "Open rate",
    opensPerReceived: "opens / received",
    purchases: "Purchases",
    revenue: "Revenue",
    ranked: "Campaigns ranked",
    noCampaigns: "No campaign has rounds in this window.",
    volume: "Sent and received per campaign",
    campaign: "Campaign",
    notReturned: (n: Count) => `${n.text} matching campaigns not returned (raise top_n).`,
    rates: "Open and conversion rate per campaign",
    conversionRate: "Conversion rate (by opens)",
    table: "Campaigns with their IDs, rounds and money",
    id: "_id",
    type: "Type",
    ab: "A/B",
    cost: "Cost",
    overTime: "Rounds over time",
    askTasks: 'Call campaign_metrics with "include_tasks": true to see each round over time.',
    noRounds: "No rounds returned.",
    scheduled: "Scheduled (KST)",
    opens: "Opens",
    earlierRounds: (n: Count) => `${n.text} earlier round(s) not drawn.`,
    /** The comparison with another window (campaign_metrics' compare_to). */
    against: {
      previous_period: "Against the previous period",
      same_period_last_year: "Against the same period last year",
    },
    /** The other window, named in the table's caption with its dates. */
    periods: {
      previous_period: "Previous period",
      same_period_last_year: "Same period last year",
    },
    compareCaption: (period: string, span: string) => `${period}: ${span} (KST)`,
    span: (from: string, to: string) => (from === to ? from : `${from} – ${to}`),
    arrows: "▲ more, ▼ less than then; rates change in percentage points (pp).",
    nothingThen: "No campaign matching these filters had rounds then: nothing to compare.",
    metric: "Metric",
    previous: "Previous",
    current: "Current",
    change: "Change",
    clicks: "Clicks",
    clickRate: "Click rate",
    inCurrency: (metric: string, currency: string) => `${metric} (${currency})`,
    /** A rate's change in percentage points, its figure already signed. */
    points: (signed: string) => `${signed} pp`,
    noChange: "no change",
    /** A metric with no value then: the whole figure is new. */
    newNow: "new",
  },
  /** A campaign's rates against its channel's recent campaigns (summarize_export's baseline). */
  baseline: {
    section: "Against its channel's recent campaigns",
    chart: (channel: string) => `Rates against ${channel}'s recent campaigns`,
    rate: "Rate",
    rates: {
      delivery: "Delivery rate",
      open: "Open rate",
      click: "Click rate",
      conversion: "Conversion rate",
      failure: "Failure rate",
    },
    thisCampaign: "This campaign",
    median: "Median",
    /** Column heads of the table view, short enough for a narrow view. */
    p25: "25th pct",
    p75: "75th pct",
    againstRange: "Range",
    above: "above the usual range",
    below: "below the usual range",
    within: "within the usual range",
    /** What the box is: the channel, how many campaigns and (when known) their dates. */
    note: (channel: string, campaigns: Count, span: string | undefined) =>
      `Box: the middle half of ${channel}'s last ${plural(campaigns, "campaign")}${span === undefined ? "" : ` (${span})`}, from the 25th to the 75th percentile, with a line at the median; dot: this campaign. The usual range reaches 1.5 box lengths beyond the box.`,
    span: (from: string, to: string) => (from === to ? from : `${from} to ${to}`),
    aboveText: (rate: string, value: string, median: string) =>
      `${rate} ${value} is above its channel's usual range (median ${median}).`,
    belowText: (rate: string, value: string, median: string) =>
      `${rate} ${value} is below its channel's usual range (median ${median}).`,
    allWithin: (channel: string, campaigns: Count) =>
      `Every rate is within the usual range of ${channel}'s last ${plural(campaigns, "campaign")}.`,
  },
  answer: {
    title: "Query answer",
    subtitle: (rows: Count, columns: Count) =>
      `${plural(rows, "row")} × ${plural(columns, "column")}`,
    sql: (sql: string) => `SQL: ${sql}`,
    chart: "Chart",
    table: "Answer",
    /** A chart's title: its numbers by its x (and its series). */
    by: (y: string, x: string) => `${y} by ${x}`,
    byBoth: (y: string, x: string, series: string) => `${y} by ${x} and ${series}`,
    against: (y: string, x: string) => `${y} against ${x}`,
    /** Why the chart is what it is. */
    reasons: {
      asked: "as the chart argument asked",
      no_rows: "the answer has no rows",
      no_numbers: "the answer has no numeric column",
      one_row: "one row: each number as a card",
      time: "a time column with numbers: a line per numeric column",
      time_by_category: "a time column, a category and a number: a line per category value",
      category: "a category with numbers: a bar per numeric column",
      two_categories: "two categories and a number: bars stacked by the second",
      two_categories_grouped:
        "two categories and a number: bars side by side, as negative values do not stack",
      two_numbers: "two numbers: a point per row",
      no_shape: "no time, category or pair of numbers to draw",
    },
    types: {
      line: "Line chart",
      bar: "Bar chart",
      scatter: "Scatter plot",
      kpi: "Key figures",
      table: "Table",
    },
    /** What is drawn and why, above the chart. */
    kind: (type: string, reason: string) => `${type} — ${reason}.`,
    noRows: "The query returned no rows.",
    /** What a chart leaves out, for notes.notDrawn. */
    moreCategories: (n: Count, column: string, kept: Count) =>
      `${n.text} more ${column} values (the ${kept.text} largest are drawn)`,
    moreSeries: (n: Count, column: string, kept: Count) =>
      `${n.text} more ${column} series (the ${kept.text} largest are drawn)`,
    morePoints: (n: Count, limit: Count) => `${plural(n, "point")} past the first ${limit.text}`,
    repeats: (n: Count, column: string) =>
      `${plural(n, "row")} repeating a ${column} value drawn already`,
    unplaced: (n: Count, column: string) => `${plural(n, "row")} without a ${column} value`,
    whereTable: "the answer's table has them all",
    /** Rows the answer had but did not return, and why. */
    rowsCut: (returned: Count, total: Count, why: string) =>
      `The answer has ${plural(total, "row")}; ${returned.text} were returned (${why}).`,
    whyMaxRows: "max_rows",
    whyCharacters: "the cap on characters",
    whyBudget: "the tool-result budget",
    tableCut: (shown: Count, total: Count) =>
      `The table shows the first ${shown.text} of the ${total.text} rows returned.`,
    describeTitle: "Tables of the exports",
    describeText: "query_export without sql describes the data: ask a question to draw it.",
    tableName: "Table",
    rows: "Rows",
    columns: "Columns",
  },
  /** Verdicts, the control group's note and the analysis' warnings: the analysis' words. */
  readout: readoutEn,
};

export type ReportMessages = typeof en;
