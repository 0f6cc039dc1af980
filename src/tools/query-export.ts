import { mkdir } from "node:fs/promises";
import { basename } from "node:path";
import { z } from "zod";
import { conversionTypeOf } from "../analysis/event-roles.js";
import { exportFilePath } from "../exports/export-file.js";
import { exportsFolder } from "../files/data-folder.js";
import { checkExportFile } from "../files/export-path.js";
import { withFilesInUse } from "../files/in-use.js";
import { formatBytes } from "../format.js";
import { absoluteFile, checkInteger, resultBase } from "../mcp/params.js";
import { defineTool } from "../mcp/tool.js";
import { ToolInputError } from "../mcp/tool-errors.js";
import { describeExports, type ExportDescription } from "../query/describe.js";
import {
  cacheOptions,
  MAX_CELL_CHARS,
  type QueryResult,
  type QuerySource,
  queryFiles,
  resolveSources,
} from "../query/index.js";
import { eventsFiles } from "../query/parquet-cache.js";
import { renderDescription, renderQueryTable } from "../query/render.js";
import { requireInsideFolder } from "../query/sources.js";
import { answerChart, chartField, chartLine } from "../report/answer-report.js";
import { CHART_TYPES, ChartChoiceError, chooseChart } from "../report/chart-choice.js";
import { REPORT_VIEW_URI } from "../resources/report-view.js";

const DEFAULT_MAX_ROWS = 100;
const MAX_ROWS = 1000;
/** Rows the text table shows; the structured rows may hold more. */
const TEXT_ROWS = 30;

const inputSchema = z.strictObject({
  sql: z.string().optional().describe("One SELECT; omit to describe the data"),
  job_ids: z.array(z.string()).optional().describe("job._id values of export jobs"),
  files: z.array(z.string()).optional().describe("Export paths in the data folder"),
  conversion_event_type: z
    .string()
    .optional()
    .describe("event_type counted as 'conversion' (e.g. purchase); default as summarize_export"),
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
    .describe(
      "Draw as (column names); default by the answer's shape (time: line, category: bar...)",
    ),
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
  description: exportDescription
    .optional()
    .describe("without sql: tables, event types, keys, rounds"),
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
  description: `One read-only SQL SELECT (DuckDB) over downloaded exports, for what summarize_export does not answer. Table events: campaign CSV rows (13 columns, job_id, (event_properties->>'amount')) and event_role (sent, received, failed, control, open, click, conversion, other: summarize_export's rules); scenario XLSX: scenario_nodes, scenario_days.
No sql: tables, event types, JSON keys, rounds, example queries. row_count counts all rows.
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
    if (jobIds.length === 0 && files.length === 0) {
      throw new ToolInputError(
        "job_ids",
        "Give job_ids (from start_export or check_export) and/or files (paths of downloaded exports).",
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
    await mkdir(runtime.dataFolder, { recursive: true });
    const sources = await resolveSources({ ...base, sql: "", maxRows: 0 });
    const fileList = sources.map((s) => ({ path: s.path, job_id: s.jobId }));
    // Marked in use: the retention sweep must not remove a file while a query reads it.
    return withFilesInUse(
      sources.map((s) => s.path),
      async () => {
        const sql = args.sql?.trim() ?? "";
        if (sql === "") {
          await call.progress(undefined, "reading the exports to describe them");
          const description: ExportDescription = await describeExports({
            events: await eventsFiles(sources, cacheOptions(base)),
            conversionType: conversionTypeOf(args.conversion_event_type),
            scenarios: sources.filter((s) => s.kind === "scenario_xlsx"),
            limits: runtime.config.query,
            spillParent: runtime.dataFolder,
            signal: call.signal,
          });
          const events = description.tables.find((t) => t.name === "events")?.rows ?? 0;
          return {
            structured: {
              summary: `${sources.length} export file(s): ${events} event rows; tables, event types, JSON keys, rounds and ${description.examples.length} example queries.`,
              files: fileList,
              description,
            },
            text: renderDescription(description),
          };
        }
        await call.progress(undefined, "running the query");
        const maxRows = args.max_rows ?? DEFAULT_MAX_ROWS;
        const result = await queryFiles({
          ...base,
          sql,
          maxRows,
          // Within the result's token budget (about 3.5 characters a token) with room to spare.
          maxChars: Math.floor(runtime.config.resultMaxTokens * 2.5),
        });
        const { cells_cut, ...rest } = result;
        const chart = drawnChart(result, args.chart);
        const cut = result.truncated
          ? `; ${result.rows.length} returned (cut by ${result.truncated_by})`
          : "";
        return {
          structured: {
            summary: `${result.row_count} row(s) × ${result.columns.length} column(s)${cut}.`,
            ...rest,
            chart: chartField(chart),
            files: fileList,
            ...(cells_cut > 0
              ? {
                  next_step: `${cells_cut} cell(s) over ${MAX_CELL_CHARS} characters were cut; select substr(...) of long text.`,
                }
              : {}),
          },
          text: `${renderQueryTable(result, { maxRows: TEXT_ROWS })}\n${chartLine(chart)}`,
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
