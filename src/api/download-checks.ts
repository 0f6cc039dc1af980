import { createHash } from "node:crypto";
import { isLoopbackHost } from "../loopback-host.js";
import { redactUrl } from "../redact.js";
import type { DownloadContext } from "./download.js";
import { DownloadRefusedError } from "./errors.js";

/**
 * What a download is checked against before connecting: the URL (and every redirect hop) and the
 * name the file is saved under.
 */

const ALLOWED_EXTENSIONS = new Set(["csv", "xlsx"]);
/**
 * File systems limit a name to 255 bytes, and a Hangul syllable is 3 bytes in UTF-8: the name
 * from the API is cut by bytes, leaving room for the job ID (at most 64 + 9) and the extension.
 */
const MAX_NAME_BYTES = 150;
const MAX_ID_LENGTH = 64;

type Refusal = DownloadRefusedError["reason"];

export function refuse(message: string, reason: Refusal): DownloadRefusedError {
  return new DownloadRefusedError(message, { operation: "download_export", reason });
}

/**
 * Checks scheme and host of one URL (the first, or a redirect hop coming `from` another URL);
 * returns it parsed.
 */
export function checkDownloadUrl(
  raw: string,
  context: Pick<DownloadContext, "apiHosts" | "downloadHosts" | "localService" | "serviceOrigins">,
  from?: URL,
): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse("The export's download URL is not a valid URL.", "bad_url");
  }
  const shown = redactUrl(url.href);
  const loopback = isLoopbackHost(url.hostname);
  if (
    loopback &&
    (context.localService !== true || (from !== undefined && !isLoopbackHost(from.hostname)))
  ) {
    throw refuse(
      `Refused to download from ${shown}: a ${from === undefined ? "download URL" : "redirect"} from ${from === undefined ? "a service that is not on this machine" : redactUrl(from.origin)} may not point at this machine.`,
      "insecure",
    );
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw refuse(`Refused to download from ${shown}: only https URLs are allowed.`, "insecure");
  }
  if (url.username !== "" || url.password !== "") {
    throw refuse(`Refused to download from ${shown}: the URL carries credentials.`, "bad_url");
  }
  const host = url.hostname.toLowerCase();
  if (context.downloadHosts !== undefined) {
    const allowed = [...context.apiHosts, ...context.downloadHosts].map((h) => h.toLowerCase());
    if (!allowed.includes(host)) {
      throw refuse(
        `Refused to download from ${shown}: host ${host} is not allowed. Add it to CRM_DOWNLOAD_HOSTS if it is the service's file host.`,
        "host_not_allowed",
      );
    }
  }
  if (url.protocol === "http:" && !(context.serviceOrigins ?? []).includes(url.origin)) {
    const own = (context.serviceOrigins ?? []).filter((o) => o.startsWith("http:"));
    throw refuse(
      `Refused to download from ${shown}: only https URLs are allowed (plain http only to the service's own address${own.length > 0 ? `, ${own.map(redactUrl).join(" or ")}` : ""}).`,
      "insecure",
    );
  }
  return url;
}

/**
 * The file name we write: `<jobId>-<file_name>.<csv|xlsx>`, built only from sanitized parts so no
 * path component, `..`, control character or leading dot of the API's values survives, and short
 * enough in bytes for any file system.
 */
export function exportFileName(jobId: string, fileName: string, fileExt: string): string {
  const ext = fileExt.trim().replace(/^\.+/, "").toLowerCase();
  if (!ALLOWED_EXTENSIONS.has(ext)) {
    throw refuse(
      `Refused to save the export: unexpected file type "${sanitizeBase(fileExt, 30)}" (expected csv or xlsx).`,
      "bad_url",
    );
  }
  const cleanId = jobId.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, MAX_ID_LENGTH);
  if (cleanId.replace(/_/g, "") === "") {
    throw refuse("Refused to save the export: the job ID is empty or unusable.", "bad_url");
  }
  // Two IDs that sanitize alike ("a/b", "a_b") must not overwrite each other's file.
  const id =
    cleanId === jobId
      ? cleanId
      : `${cleanId}_${createHash("sha256").update(jobId).digest("hex").slice(0, 8)}`;
  const base = sanitizeBase(fileName, MAX_NAME_BYTES) || "export";
  return `${id}-${base}.${ext}`;
}

function sanitizeBase(value: string, maxBytes: number): string {
  // Keep only the last path component, whichever separator the service used.
  const last = value.split(/[/\\]/).pop() ?? "";
  const cleaned = last
    // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, "")
    .replace(/[<>:"|?*]/g, "_")
    .replace(/\.{2,}/g, ".");
  // Cut whole code points (never half a character) until the UTF-8 length fits.
  let cut = "";
  let bytes = 0;
  for (const char of cleaned) {
    bytes += Buffer.byteLength(char);
    if (bytes > maxBytes) break;
    cut += char;
  }
  // Trimmed after the cut, so a cut cannot leave a trailing dot or space behind.
  return cut.replace(/^[.\s]+/, "").replace(/[.\s]+$/, "");
}
