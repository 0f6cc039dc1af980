import { createHash } from "node:crypto";
import { basename, extname, join } from "node:path";
import type { ResourceLink } from "@modelcontextprotocol/server";
import type { SummaryResult } from "../analysis/schemas.js";
import { writeFileAtomic } from "../file-io/atomic-file.js";
import { formatBytes } from "../format.js";
import { reportHtmlWithData } from "./html.js";
import type { Lang } from "./i18n/lang.js";

/**
 * HTML reports summarize_export writes on request (`report: true`) into the data folder's
 * reports/ and serves back as `crm-report://<name>` resources: the same page as the MCP App
 * view, with the data written in, for clients that show no App and for people to mail.
 */

export const REPORT_RESOURCE_SCHEME = "crm-report";
/** What a report name may be: one file name inside reports/, never a path. */
export const REPORT_NAME = /^[\w.-]{1,120}\.html$/;

export function reportsDir(dataDir: string): string {
  return join(dataDir, "reports");
}

/**
 * One file per source file, options and language: a report asked for twice is written over, not
 * twice; the same export in Korean and in English is two files.
 */
export function reportFileName(summary: SummaryResult, lang: Lang): string {
  const source = summary.file.path;
  const stem =
    basename(source, extname(source))
      .replace(/[^\w.-]+/g, "_")
      .slice(0, 80) || "export";
  const key =
    summary.kind === "campaign_event_data"
      ? `${source}|${summary.conversion_event_type.types.join(",")}|${lang}`
      : `${source}|${lang}`;
  const hash = createHash("sha256").update(key).digest("hex").slice(0, 8);
  return `${stem}-${hash}.html`;
}

export async function writeReportFile(
  dataDir: string,
  summary: SummaryResult,
  lang: Lang,
): Promise<{ path: string; bytes: number; link: ResourceLink }> {
  const name = reportFileName(summary, lang);
  const path = join(reportsDir(dataDir), name);
  const html = await reportHtmlWithData(summary, lang);
  await writeFileAtomic(path, html);
  const bytes = Buffer.byteLength(html);
  return {
    path,
    bytes,
    link: {
      type: "resource_link",
      uri: `${REPORT_RESOURCE_SCHEME}://${name}`,
      name,
      mimeType: "text/html",
      description: `HTML report with charts of ${basename(summary.file.path)} (${formatBytes(bytes)}), also at ${path}`,
    },
  };
}
