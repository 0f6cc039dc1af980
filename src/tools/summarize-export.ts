import { z } from "zod";
import { SUMMARY_CATALOGUES } from "../analysis/i18n/index.js";
import {
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
import { formatBytes } from "../format.js";
import { absoluteFile, jobIdParam, resultBase } from "../mcp/params.js";
import { defineTool } from "../mcp/tool.js";
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
    const lang = args.lang ?? defaultLang(runtime.config.timeZone);
    const words = SUMMARY_CATALOGUES[lang];
    const text =
      renderSummaryMarkdown(result, { detail: args.detail === true, lang }) +
      (vsMetrics === undefined || vsMetrics.length === 0
        ? ""
        : `\n**Against campaign_metrics**: ${vsMetrics.join(" ")}`);
    const structured = {
      ...result,
      file_path: result.file.path,
      ...(vsMetrics === undefined ? {} : { vs_campaign_metrics: vsMetrics }),
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
