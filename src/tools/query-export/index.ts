import { mkdir } from "node:fs/promises";
import { basename } from "node:path";
import { z } from "zod";
import { conversionTypeOf } from "../../analysis/event-roles.js";
import { exportFilePath } from "../../exports/export-file.js";
import { exportsFolder } from "../../files/data-folder.js";
import { checkExportFile } from "../../files/export-path.js";
import { withFilesInUse } from "../../files/in-use.js";
import { formatBytes, formatCount } from "../../format.js";
import { describeHistory, withHistoryTables } from "../../history/index.js";
import { absoluteFile, checkInteger, resultBase } from "../../mcp/params.js";
import { defineTool } from "../../mcp/tool.js";
import { ToolInputError } from "../../mcp/tool-errors.js";
import { describeExports, type ExportDescription } from "../../query/describe.js";
import {
  cacheOptions,
  MAX_CELL_CHARS,
  type QueryResult,
  type QuerySource,
  queryFiles,
  resolveSources,
} from "../../query/index.js";
import { eventsFiles } from "../../query/parquet-cache.js";
import { renderDescription, renderQueryTable } from "../../query/render.js";
import { requireInsideFolder } from "../../query/sources.js";
import { answerChart, chartField, chartLine } from "../../report/answer-report.js";
import { CHART_TYPES, ChartChoiceError, chooseChart } from "../../report/chart-choice.js";
import { REPORT_VIEW_URI } from "../../resources/report-view.js";
import {
  EMPTY_HISTORY_STEP,
  type HeldHistory,
  heldHistory,
  historyDescriptionSchema,
  renderHistoryDescription,
  STILL_ADDING_NOTE,
} from "./history.js";
import { historyRows, withHistoryRows } from "./history-rows.js";

const DEFAULT_MAX_ROWS = 100;
const MAX_ROWS = 1000;
/** Rows the text table shows; the structured rows may hold more. */
const TEXT_ROWS = 30;

const inputSchema = z.strictObject({
  sql: z.string().optional().describe("one SELECT; omit: describe the data"),
  job_ids: z.array(z.string()).optional().describe("export job IDs"),
  files: z.array(z.string()).optional().describe("export file paths"),
  history: z.boolean().optional().describe("tables history, history_campaigns"),
  conversion_event_type: z.string().optional().describe("event_type counted as conversion"),
  max_rows: z
    .number()
    .meta({ minimum: 1, maximum: MAX_ROWS })
    .optional()
    .describe(`default ${DEFAULT_MAX_ROWS}`),
  chart: z
    .strictObject({
      type: z.enum(CHART_TYPES),
      x: z.string().optional(),
      y: z.array(z.string()).optional(),
      series: z.string().optional(),
    })
    .optional()
    .describe("default: by the answer's shape"),
});

const column = z.object({ name: z.string(), type: z.string() });
/** What query_export without sql returns (src/query/describe.ts, ExportDescription). */
const exportDescription = z.object({
  tables: z.array(z.object({ name: z.string(), rows: z.number(), columns: z.array(column) })),
  conversion_event_type: z.string().nullable(),
  event_roles: z.array(z.object({ event_role: z.string(), rows: z.number() })),
  event_types: z.array(
    z.object({ event_type: z.string(), event_role: z.string(), rows: z.number() }),
  ),
  json_keys: z.array(z.object({ column: z.string(), key: z.string(), rows: z.number() })),
  rounds: z.array(
    z.object({
      task_id: z.string(),
      scheduled_at: z.string(),
      group: z.string().nullable(),
      sent: z.number(),
    }),
  ),
  rounds_total: z.number(),
  examples: z.array(z.string()),
});
const outputSchema = z.object({
  ...resultBase,
  columns: z.array(column).optional(),
  rows: z.array(z.array(z.unknown())).optional(),
  row_count: z.number().optional().describe("rows of the whole result"),
  truncated_by: z.enum(["max_rows", "characters"]).optional(),
  files: z.array(z.object({ path: z.string(), job_id: z.string().nullable() })),
  description: exportDescription.optional(),
  history: historyDescriptionSchema.optional(),
  chart: z
    .object({
      type: z.enum(CHART_TYPES),
      x: z.string().nullable(),
      y: z.array(z.string()),
      series: z.string().nullable(),
      reason: z.string(),
    })
    .optional()
    .describe("as drawn"),
});

export default defineTool({
  name: "query_export",
  title: "SQL over export files",
  description: `One read-only DuckDB SQL SELECT over exports and/or their history. Table events: campaign CSV rows (13 columns, job_id; event_properties->>'amount') and event_role (sent, received, failed, control, open, click, conversion, other: summarize_export's rules); scenario XLSX: scenario_nodes, scenario_days; history: every export's events + campaign_id, each round once.
No sql: tables, event types, JSON keys, rounds, examples.
Example: query_export {"job_ids": ["exp_abc123"], "sql": "SELECT channel, count(*) AS n FROM events GROUP BY 1", "chart": {"type": "bar", "x": "channel", "y": ["n"]}}`,
  inputSchema,
  outputSchema,
  appView: REPORT_VIEW_URI,
  annotations: {
    title: "SQL over export files",
    readOnlyHint: true,
    idempotentHint: true,
    openWorldHint: true,
  },
  async handler(args, runtime, call) {
    checkInteger(args.max_rows, "max_rows", 1, MAX_ROWS);
    const jobIds = (args.job_ids ?? []).map((id) => id.trim()).filter((id) => id !== "");
    const files = (args.files ?? []).map((f) => f.trim()).filter((f) => f !== "");
    if (jobIds.length === 0 && files.length === 0 && args.history !== true) {
      throw new ToolInputError(
        "job_ids",
        "Give job_ids (from start_export or check_export), files (paths of downloaded exports) and/or history: true (every export kept, across campaigns).",
      );
    }
    const chosen: { path: string; jobId: string | null }[] = [];
    for (const [i, jobId] of jobIds.entries()) {
      await call.progress(i, `finding the file of export job ${jobId}`, jobIds.length);
      chosen.push({ path: await exportFilePath(runtime, jobId, call, "query_export"), jobId });
    }
    for (const file of files) chosen.push({ path: absoluteFile(file, "files"), jobId: null });
    // The folder rule summarize_export keeps too, checked before a byte of a file is read.
    const readable = await runtime.readableFolders();
    for (const { path } of chosen) await checkExportFile(path, readable);
    let held: HeldHistory | undefined;
    if (args.history === true) {
      await call.progress(undefined, "reading the history of exports");
      held = await heldHistory(runtime, call);
    }
    const base = {
      files: chosen,
      limits: runtime.config.query,
      spillParent: runtime.dataFolder,
      checkSource: requireInsideFolder(readable),
      ...(args.conversion_event_type !== undefined
        ? { conversionEventType: args.conversion_event_type }
        : {}),
      // Each export is converted to Parquet on its first query; later ones read the copy.
      cache: {
        dataFolder: runtime.dataFolder,
        exportsFolder: exportsFolder(runtime.dataFolder),
        onConvert: (source: QuerySource, when: "now" | "background") =>
          call.progress(
            undefined,
            when === "now"
              ? `converting ${basename(source.path)} (${formatBytes(source.bytes)}) to Parquet once; later questions on it are fast`
              : `reading ${basename(source.path)} (${formatBytes(source.bytes)}) as CSV; a Parquet copy is being made in the background, so later questions on it are fast`,
          ),
      },
      signal: call.signal,
    };
    // An export the history holds whole is read from there (history-rows.ts).
    const kept = historyRows(() => runtime.history.history(), {
      adding: async (jobId) => (await runtime.history.status(jobId))?.status === "adding",
      onRead: (source) =>
        call.progress(
          undefined,
          `reading ${basename(source.path)} from its copy in the history of exports (Parquet)`,
        ),
    });
    await mkdir(runtime.dataFolder, { recursive: true });
    const sources =
      chosen.length === 0 ? [] : await resolveSources({ ...base, sql: "", maxRows: 0 });
    const fileList = sources.map((s) => ({ path: s.path, job_id: s.jobId }));
    const adding = held?.stillAdding === true ? ` ${STILL_ADDING_NOTE}` : "";
    // Marked in use: the retention sweep must not remove a file while a query reads it.
    return withFilesInUse(
      sources.map((s) => s.path),
      async () => {
        const sql = args.sql?.trim() ?? "";
        if (sql === "") {
          await call.progress(undefined, "reading the data to describe it");
          const description: ExportDescription | undefined =
            sources.length === 0
              ? undefined
              : await withHistoryRows(kept, async (keptRows) =>
                  describeExports({
                    events: await eventsFiles(sources, cacheOptions(base), keptRows),
                    conversionType: conversionTypeOf(args.conversion_event_type),
                    scenarios: sources.filter((s) => s.kind === "scenario_xlsx"),
                    limits: runtime.config.query,
                    spillParent: runtime.dataFolder,
                    signal: call.signal,
                  }),
                );
          const history =
            held === undefined
              ? undefined
              : await describeHistory(held.history, {
                  limits: runtime.config.query,
                  spillParent: runtime.dataFolder,
                  conversionEventType: args.conversion_event_type,
                  signal: call.signal,
                });
          const events = description?.tables.find((t) => t.name === "events")?.rows ?? 0;
          const said = [
            ...(description === undefined
              ? []
              : [
                  `${sources.length} export file(s): ${events} event rows; tables, event types, JSON keys, rounds and ${description.examples.length} example queries.`,
                ]),
            ...(history === undefined
              ? []
              : [
                  history.exports === 0
                    ? "The history of exports is empty."
                    : `History: ${history.campaigns_total} campaign(s), ${formatCount(history.rows)} event rows, rounds ${history.rounds_from} to ${history.rounds_to}; ${history.examples.length} example questions.`,
                ]),
          ];
          const empty = history?.exports === 0;
          return {
            structured: {
              summary: `${said.join(" ")}${adding}`,
              files: fileList,
              ...(description === undefined ? {} : { description }),
              ...(history === undefined ? {} : { history }),
              ...(empty ? { next_step: EMPTY_HISTORY_STEP } : {}),
            },
            text: [
              ...(description === undefined ? [] : [renderDescription(description)]),
              ...(history === undefined ? [] : [renderHistoryDescription(history)]),
              ...(adding === "" ? [] : [STILL_ADDING_NOTE]),
            ].join("\n\n"),
          };
        }
        await call.progress(undefined, "running the query");
        const maxRows = args.max_rows ?? DEFAULT_MAX_ROWS;
        const options = {
          ...base,
          sql,
          maxRows,
          // Within the result's token budget (about 3.5 characters a token) with room to spare.
          maxChars: Math.floor(runtime.config.resultMaxTokens * 2.5),
        };
        let emptyHistory = false;
        const result = await withHistoryRows(kept, (keptRows) =>
          held === undefined
            ? queryFiles({ ...options, keptRows })
            : withHistoryTables(held.history, args.conversion_event_type, (extra, catalogue) => {
                emptyHistory = catalogue.exports.length === 0;
                return queryFiles({ ...options, keptRows, extra });
              }),
        );
        const { cells_cut, ...rest } = result;
        const chart = drawnChart(result, args.chart);
        const cut = result.truncated
          ? `; ${result.rows.length} returned (cut by ${result.truncated_by})`
          : "";
        const steps = [
          ...(cells_cut > 0
            ? [
                `${cells_cut} cell(s) over ${MAX_CELL_CHARS} characters were cut; select substr(...) of long text.`,
              ]
            : []),
          ...(emptyHistory ? [EMPTY_HISTORY_STEP] : []),
        ];
        return {
          structured: {
            summary: `${result.row_count} row(s) × ${result.columns.length} column(s)${cut}.${adding}`,
            ...rest,
            chart: chartField(chart),
            files: fileList,
            ...(steps.length > 0 ? { next_step: steps.join(" ") } : {}),
          },
          text: [
            renderQueryTable(result, { maxRows: TEXT_ROWS }),
            chartLine(chart),
            ...(emptyHistory ? [EMPTY_HISTORY_STEP] : []),
            ...(adding === "" ? [] : [STILL_ADDING_NOTE]),
          ].join("\n"),
        };
      },
    );
  },
});

/** The chart of the answer: the one asked for, checked against its columns, or its shape's. */
function drawnChart(result: QueryResult, asked: z.output<typeof inputSchema>["chart"]) {
  try {
    if (asked !== undefined) chooseChart(result.columns, result.rows, asked);
  } catch (error) {
    if (error instanceof ChartChoiceError) throw new ToolInputError("chart", error.message);
    throw error;
  }
  // As the view chooses: a chart asked for that is the shape's own keeps the shape's reason.
  return answerChart({ ...result, ...(asked === undefined ? {} : { chart: asked }) });
}
