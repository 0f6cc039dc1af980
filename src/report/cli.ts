import { writeFile } from "node:fs/promises";
import { extname } from "node:path";
import { AnalysisError, summarizeFile } from "../analysis/index.js";
import { type AnalysisSettings, ConfigError, loadAnalysisSettings } from "../config.js";
import { formatBytes } from "../format.js";
import { reportHtmlWithData } from "./html.js";
import { defaultLang, isLang, type Lang } from "./i18n/lang.js";

const USAGE = `Usage: crm-insights-mcp report FILE --out PATH.html [--lang ko|en] [--conversion-event-type TYPE]
  --lang  the page's language; by default Korean when CRM_TIME_ZONE is Asia/Seoul (its default), else English
`;

/** `crm-insights-mcp report FILE --out PATH.html`: the report page with the summary written in. */
export async function runReportCommand(args: string[]): Promise<number> {
  let out: string | undefined;
  let conversionEventType: string | undefined;
  let lang: Lang | undefined;
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--out" || arg === "-o") {
      out = args[++i];
      if (out === undefined) return usage("--out needs a path.");
    } else if (arg === "--lang") {
      const value = args[++i];
      if (!isLang(value)) {
        return usage(
          `--lang takes ko or en${value === undefined ? "" : ` (got ${JSON.stringify(value)})`}.`,
        );
      }
      lang = value;
    } else if (arg === "--conversion-event-type") {
      conversionEventType = args[++i];
      if (conversionEventType === undefined) return usage("--conversion-event-type needs a value.");
    } else if (arg === "-h" || arg === "--help") {
      process.stdout.write(USAGE);
      return 0;
    } else if (arg.startsWith("-")) {
      return usage(`Unknown option ${arg}.`);
    } else files.push(arg);
  }
  const file = files[0];
  if (file === undefined || files.length > 1) return usage("Give exactly one export file.");
  if (out === undefined) return usage("Give the output file with --out PATH.html.");
  if (extname(out).toLowerCase() !== ".html") {
    return usage(`The output file should end in .html (got ${JSON.stringify(out)}).`);
  }
  let settings: AnalysisSettings;
  try {
    settings = loadAnalysisSettings(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`crm-insights-mcp report: ${error.message}\n`);
    return 2;
  }
  try {
    const summary = await summarizeFile(file, {
      ...(conversionEventType !== undefined ? { conversionEventType } : {}),
      timeZone: settings.timeZone,
      maxBytes: settings.maxDownloadBytes,
    });
    const html = await reportHtmlWithData(summary, lang ?? defaultLang(settings.timeZone));
    await writeFile(out, html);
    process.stdout.write(
      `Wrote ${out} (${formatBytes(Buffer.byteLength(html))}): ${summary.summary}\n`,
    );
    return 0;
  } catch (error) {
    if (error instanceof AnalysisError) {
      process.stderr.write(`crm-insights-mcp report: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

function usage(message: string): number {
  process.stderr.write(`${message}\n${USAGE}`);
  return 2;
}
