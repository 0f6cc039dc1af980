import { type AnalysisSettings, ConfigError, loadAnalysisSettings } from "../config.js";
import { isLang, type Lang } from "./i18n/lang.js";
import { AnalysisError, renderSummaryMarkdown, summarizeFile } from "./index.js";

const USAGE = `Usage: crm-insights-mcp summarize FILE [--json] [--detail] [--lang ko|en] [--conversion-event-type TYPE] [--threads N]
  --lang  the text's language (default en); --json prints the same JSON in either
`;
const MAX_THREADS = 16;

/** `crm-insights-mcp summarize FILE [--json]`: markdown (or JSON) on stdout, errors on stderr. */
export async function runSummarizeCommand(args: string[]): Promise<number> {
  let json = false;
  let detail = false;
  let conversionEventType: string | undefined;
  let threads: number | undefined;
  let lang: Lang = "en";
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--json") json = true;
    else if (arg === "--detail") detail = true;
    else if (arg === "--lang") {
      const value = args[++i];
      if (!isLang(value)) {
        const got = value === undefined ? "" : ` (got ${JSON.stringify(value)})`;
        process.stderr.write(`--lang takes ko or en${got}.\n${USAGE}`);
        return 2;
      }
      lang = value;
    } else if (arg === "--conversion-event-type") {
      conversionEventType = args[++i];
      if (conversionEventType === undefined) {
        process.stderr.write(`--conversion-event-type needs a value.\n${USAGE}`);
        return 2;
      }
    } else if (arg === "--threads") {
      threads = Number(args[++i]);
      if (!Number.isInteger(threads) || threads < 1 || threads > MAX_THREADS) {
        process.stderr.write(`--threads needs a whole number from 1 to ${MAX_THREADS}.\n${USAGE}`);
        return 2;
      }
    } else if (arg === "-h" || arg === "--help") {
      process.stderr.write(USAGE);
      return 0;
    } else if (arg.startsWith("--")) {
      process.stderr.write(`Unknown option ${arg}.\n${USAGE}`);
      return 2;
    } else files.push(arg);
  }
  const file = files[0];
  if (file === undefined || files.length > 1) {
    process.stderr.write(`Give exactly one file.\n${USAGE}`);
    return 2;
  }
  let settings: AnalysisSettings;
  try {
    // The server's checks and caps: a bad CRM_TIME_ZONE is named, not met later as a crash.
    settings = loadAnalysisSettings(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`crm-insights-mcp summarize: ${error.message}\n`);
    return 2;
  }
  try {
    const result = await summarizeFile(file, {
      ...(conversionEventType !== undefined ? { conversionEventType } : {}),
      timeZone: settings.timeZone,
      maxBytes: settings.maxDownloadBytes,
      ...(threads !== undefined ? { threads } : {}),
    });
    process.stdout.write(
      json
        ? `${JSON.stringify(result, null, 2)}\n`
        : `${renderSummaryMarkdown(result, { detail, reader: "command", lang })}\n`,
    );
    return 0;
  } catch (error) {
    if (error instanceof AnalysisError) {
      process.stderr.write(`crm-insights-mcp summarize: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
