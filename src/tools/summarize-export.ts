import { z } from "zod";
import { SUMMARY_CATALOGUES } from "../analysis/i18n/index.js";
import {
  type CampaignSummary,
  campaignSummaryOutputSchema,
  renderSummaryMarkdown,
  scenarioSummaryOutputSchema,
  summarizeFile,
} from "../analysis/index.js";
import { EXPORT_MAX_SENDS, sendsText } from "../api/limits.js";
import { exportFilePath } from "../exports/export-file.js";
import { exportVsMetrics } from "../exports/metrics-vs-export.js";
import { checkExportFile } from "../files/export-path.js";
import { withFileInUse } from "../files/in-use.js";
import { callHint, formatBytes, percent } from "../format.js";
import type { BaselineAnswer, BaselineRate } from "../history/baseline.js";
import { log } from "../log.js";
import { absoluteFile, jobIdParam, resultBase } from "../mcp/params.js";
import { defineTool, type ToolCall, type ToolRuntime } from "../mcp/tool.js";
import { ToolInputError } from "../mcp/tool-errors.js";
import { writeReportFile } from "../report/files.js";
import { defaultLang } from "../report/i18n/lang.js";
import { REPORT_VIEW_URI } from "../resources/report-view.js";

// Strict: a misspelled or unknown argument is refused by name instead of silently dropped.
const inputSchema = z.strictObject({
  job_id: jobIdParam("Or give file."),
  file: z
    .string()
    .optional()
    .describe("Absolute path of an export in the data folder (file_path of check_export)."),
  conversion_event_type: z
    .string()
    .optional()
    .describe("Campaign CSV: the conversion event (e.g. purchase); default inferred."),
  detail: z
    .boolean()
    .optional()
    .describe("true: a longer text with every round, node and error code."),
  report: z
    .boolean()
    .optional()
    .describe("true: also write the charts as an HTML file (crm-report:// link)."),
  lang: z.enum(["ko", "en"]).optional().describe("Default ko in Asia/Seoul, else en."),
});

const campaign = campaignSummaryOutputSchema.omit({ kind: true, summary: true }).partial();
const scenario = scenarioSummaryOutputSchema
  .omit({ kind: true, summary: true, totals: true, file: true })
  .partial();

const baselineMetric = z.object({
  value: z.number().describe("This campaign's rate."),
  median: z.number(),
  p25: z.number(),
  p75: z.number(),
  flag: z
    .enum(["above", "below"])
    .nullable()
    .describe("Outside 1.5 IQR beyond p75 (above) or p25 (below); else null."),
});

// One object schema for both kinds: `kind` says which set of fields is present.
const outputSchema = z.object({
  ...resultBase,
  kind: z.enum(["campaign_event_data", "scenario_daily_metrics"]),
  file_path: z.string(),
  report_path: z.string().optional().describe("the HTML report written with report: true"),
  vs_campaign_metrics: z
    .array(z.string())
    .optional()
    .describe(
      "Campaign CSV: how campaign_metrics counts the same rounds differently (service rules).",
    ),
  ...campaign.shape,
  ...scenario.shape,
  totals: z
    .union([campaignSummaryOutputSchema.shape.totals, scenarioSummaryOutputSchema.shape.totals])
    .optional(),
  baseline: z
    .object({
      channel: z.string().describe("The campaign's channel, or its channel mix joined by +."),
      campaigns: z.number().describe("Other campaigns of that channel mix, the last 20 at most."),
      window: z
        .object({ from: z.string(), to: z.string() })
        .describe("First and last round dates (YYYY-MM-DD) of those campaigns."),
      metrics: z.object({
        delivery: baselineMetric.describe("received / (received + failed): success_rate"),
        open: baselineMetric.describe("opens / received: open_rate"),
        click: baselineMetric.describe("landing clicks / received"),
        conversion: baselineMetric.describe("send-group conversions / opens: conversion_rate"),
        failure: baselineMetric.describe("failed / sent"),
      }),
    })
    .optional()
    .describe("Rates vs 3+ other campaigns of its channel in the history."),
});

export default defineTool({
  name: "summarize_export",
  title: "Summarize an export file",
  description: `Summarize a campaign CSV or scenario XLSX export. Use after start_export/check_export (job_id), or on a file in the data folder.
Campaign: rounds per task, time and group, delivery per channel, failures by error code, revenue per currency, A/B test with control group, timing. Scenario: node totals, daily trend, sheet checks, branch A vs B.
Limits: .csv/.xlsx; a ${sendsText(EXPORT_MAX_SENDS)}-send file (~700 MB) takes seconds. Other questions: query_export.
Example: summarize_export {"job_id": "exp_abc123", "report": true}`,
  inputSchema,
  outputSchema,
  appView: REPORT_VIEW_URI,
  annotations: {
    title: "Summarize an export file",
    readOnlyHint: true,
    idempotentHint: true,
    openWorldHint: true,
  },
  async handler(args, runtime, call) {
    const jobId = args.job_id?.trim() || undefined;
    const file = args.file?.trim() || undefined;
    if ((jobId === undefined) === (file === undefined)) {
      throw new ToolInputError(
        jobId === undefined ? "job_id" : "file",
        "Give exactly one of job_id (from start_export or check_export) or file (a local .csv/.xlsx path).",
      );
    }
    const given =
      jobId === undefined
        ? absoluteFile(file as string)
        : await exportFilePath(runtime, jobId, call, "summarize_export");
    // The folder rule query_export keeps too, checked before a byte of the file is read.
    const { path } = await checkExportFile(given, await runtime.readableFolders());
    // Marked in use: the retention sweep must not remove the file while it is being read.
    const result = await withFileInUse(path, () =>
      summarizeFile(path, {
        ...(args.conversion_event_type !== undefined
          ? { conversionEventType: args.conversion_event_type }
          : {}),
        timeZone: runtime.config.timeZone,
        signal: call.signal,
        maxBytes: runtime.config.maxDownloadBytes,
      }),
    );
    const vsMetrics =
      result.kind === "campaign_event_data"
        ? exportVsMetrics(result.revenue.by_currency)
        : undefined;
    const baseline =
      result.kind === "campaign_event_data"
        ? await baselineOf(runtime, call, result, { jobId, conversion: args.conversion_event_type })
        : undefined;
    const lang = args.lang ?? defaultLang(runtime.config.timeZone);
    const words = SUMMARY_CATALOGUES[lang];
    const text =
      renderSummaryMarkdown(result, { detail: args.detail === true, lang }) +
      (vsMetrics === undefined || vsMetrics.length === 0
        ? ""
        : `\n**Against campaign_metrics**: ${vsMetrics.join(" ")}`) +
      (baseline === undefined || result.kind !== "campaign_event_data"
        ? ""
        : `\n${baselineLine(baseline, lang, result)}`);
    const structured = {
      ...result,
      file_path: result.file.path,
      ...(vsMetrics === undefined ? {} : { vs_campaign_metrics: vsMetrics }),
      ...(baseline?.status === "ready" ? { baseline: baseline.baseline } : {}),
    };
    if (args.report === true) {
      const report = await writeReportFile(runtime.config.dataDir, result, lang);
      return {
        structured: { ...structured, report_path: report.path },
        text: `${text}\n${words.charts.written(report.path, formatBytes(report.bytes))}`,
        links: [report.link],
      };
    }
    return {
      structured,
      // A host that renders MCP Apps already shows the charts; others learn how to get them.
      text: call.rendersApps ? text : `${text}\n${words.charts.offer}`,
    };
  },
});

/**
 * The campaign against the history's other campaigns of its channel, or undefined with the
 * history off or a file without sends. Never fails the summary: a history that cannot answer in
 * time is logged and the summary goes out without it.
 */
async function baselineOf(
  runtime: ToolRuntime,
  call: ToolCall,
  summary: CampaignSummary,
  given: { jobId: string | undefined; conversion: string | undefined },
): Promise<BaselineAnswer | undefined> {
  const channels = summary.delivery.by_channel
    .map((c) => c.channel)
    .filter((c) => c !== "(empty)" && c !== "control");
  if (channels.length === 0) return undefined;
  try {
    const history = await runtime.history.history();
    if (history === undefined) return undefined;
    const { BASELINE_TIMEOUT_SECONDS, campaignBaseline, campaignRates } = await import(
      "../history/baseline.js"
    );
    const entry = given.jobId === undefined ? undefined : await runtime.ledger.get(given.jobId);
    const limits = runtime.config.query;
    return await campaignBaseline(history, {
      channels,
      values: campaignRates(summary.totals),
      campaignId:
        entry?.request.type === "campaign_event_data" ? entry.request.campaign_id : undefined,
      taskIds: summary.rounds.map((r) => r.task_id),
      sourcePath: summary.file.path,
      conversionEventType: given.conversion,
      limits: {
        ...limits,
        timeoutSeconds: Math.min(limits.timeoutSeconds, BASELINE_TIMEOUT_SECONDS),
      },
      spillParent: runtime.dataFolder,
      signal: call.signal,
    });
  } catch (error) {
    log.warn("summarize_export: the baseline was left out", {
      error: error instanceof Error ? error.message : String(error),
    });
    return undefined;
  }
}

const RATE_WORDS: Record<"en" | "ko", Record<BaselineRate, string>> = {
  en: {
    delivery: "delivery",
    open: "open",
    click: "click",
    conversion: "conversion by opens",
    failure: "failure",
  },
  ko: {
    delivery: "발송 성공률",
    open: "오픈율(건)",
    click: "클릭률",
    conversion: "오픈 대비 전환율",
    failure: "실패율",
  },
};

/** Days campaign_metrics is asked about in the too-few hint: within one metrics window. */
const HINT_DAYS = 90;

/** One line: the rates against the channel's, or how many more campaigns it needs. */
function baselineLine(answer: BaselineAnswer, lang: "en" | "ko", summary: CampaignSummary): string {
  const words = RATE_WORDS[lang];
  if (answer.status === "ready") {
    const b = answer.baseline;
    const rates = Object.entries(b.metrics).map(([rate, m]) => {
      const flag =
        m.flag === null
          ? ""
          : ` **${lang === "ko" ? (m.flag === "above" ? "높음" : "낮음") : m.flag}**`;
      return `${words[rate as BaselineRate]} ${percent(m.value)} (${percent(m.median)}, ${percent(m.p25)}–${percent(m.p75)})${flag}`;
    });
    return lang === "ko"
      ? `**채널 기준**: ${b.channel} 다른 캠페인 ${b.campaigns}개 (${b.window.from}~${b.window.to})의 중앙값, p25–p75 대비: ${rates.join(", ")}.`
      : `**Against its channel**: ${b.channel}, ${b.campaigns} other campaigns (${b.window.from} to ${b.window.to}), median and p25–p75: ${rates.join(", ")}.`;
  }
  const last = summary.rounds
    .map((r) => r.scheduled_at.slice(0, 10))
    .sort()
    .at(-1);
  const metrics =
    last === undefined
      ? "campaign_metrics"
      : callHint("campaign_metrics", { task_from: daysBefore(last, HINT_DAYS - 1), task_to: last });
  const { channel, campaigns, needed } = answer;
  return lang === "ko"
    ? `**채널 기준**: 히스토리에 ${channel} 다른 캠페인이 ${campaigns}개 있어 비교하려면 ${needed}개 더 필요합니다. ${metrics}로 캠페인과 채널을 보고 ${channel} 캠페인 ${needed}개를 start_export로 내보낸 뒤(내려받은 파일은 히스토리에 더해집니다) summarize_export를 다시 부르세요.`
    : `**Against its channel**: the history holds ${campaigns} other ${channel} campaign${campaigns === 1 ? "" : "s"}; a baseline needs ${needed} more. ${metrics} lists campaigns with their channels: export ${needed} more ${channel} campaign${needed === 1 ? "" : "s"} with start_export (each download joins the history), then call summarize_export again.`;
}

function daysBefore(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) - days * 86_400_000).toISOString().slice(0, 10);
}
