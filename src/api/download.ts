import { randomBytes } from "node:crypto";
import { mkdir, open, rename, unlink } from "node:fs/promises";
import { join, resolve, sep } from "node:path";
import type { Dispatcher } from "undici";
import { isLoopbackHost } from "../net.js";
import { redactUrl } from "../redact.js";
import { callSignal } from "./call-signal.js";
import { mapTransportError } from "./error-mapping.js";
import { ApiError, DownloadFailedError, DownloadRefusedError } from "./errors.js";
import type { ExportJob } from "./schemas.js";
import type { DownloadedFile } from "./types.js";

/**
 * Downloads a completed job's pre-signed `download_url`. Everything that can be checked is checked
 * before connecting (expiry, scheme, host, announced size); every redirect hop is checked again.
 * No Authorization header is ever sent: the URL carries its own signature and a key sent to a
 * file host would leak to a third party. The file appears under its final name only once complete.
 */

const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const ALLOWED_EXTENSIONS = new Set(["csv", "xlsx"]);
const MAX_NAME_LENGTH = 100;

export interface DownloadContext {
  dispatcher: Dispatcher;
  userAgent: string;
  now: () => number;
  /** Host names of the API base URLs; always allowed. */
  apiHosts: string[];
  /** Extra allowed hosts; `undefined` allows any host. */
  downloadHosts: string[] | undefined;
  maxBytes: number;
  /** Directory the finished file lands in. */
  directory: string;
  signal?: AbortSignal | undefined;
  deadline?: number | undefined;
}

type Refusal = DownloadRefusedError["reason"];

function refuse(message: string, reason: Refusal): DownloadRefusedError {
  return new DownloadRefusedError(message, { operation: "download_export", reason });
}

function failed(message: string, status?: number): DownloadFailedError {
  return new DownloadFailedError(message, { operation: "download_export", status });
}

/** Checks scheme and host of one URL (the first or a redirect hop); returns it parsed. */
export function checkDownloadUrl(
  raw: string,
  context: Pick<DownloadContext, "apiHosts" | "downloadHosts">,
): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse("The export's download URL is not a valid URL.", "bad_url");
  }
  const shown = redactUrl(url.href);
  const loopback = isLoopbackHost(url.hostname);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) {
    throw refuse(
      `Refused to download from ${shown}: only https URLs are allowed (plain http only on this machine).`,
      "insecure",
    );
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
  return url;
}

/**
 * The file name we write: `<jobId>-<file_name>.<csv|xlsx>`, built only from sanitized parts so no
 * path component, `..`, control character or leading dot of the API's values survives.
 */
export function exportFileName(jobId: string, fileName: string, fileExt: string): string {
  const ext = fileExt.trim().replace(/^\.+/, "").toLowerCase();
  if (!ALLOWED_EXTENSIONS.has(ext)) {
    throw refuse(
      `Refused to save the export: unexpected file type "${sanitizeBase(fileExt, 10)}" (expected csv or xlsx).`,
      "bad_url",
    );
  }
  const id = jobId.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
  if (id.replace(/_/g, "") === "") {
    throw refuse("Refused to save the export: the job ID is empty or unusable.", "bad_url");
  }
  const base = sanitizeBase(fileName, MAX_NAME_LENGTH) || "export";
  return `${id}-${base}.${ext}`;
}

function sanitizeBase(value: string, maxLength: number): string {
  // Keep only the last path component, whichever separator the service used.
  const last = value.split(/[/\\]/).pop() ?? "";
  const cleaned = last
    // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, "")
    .replace(/[<>:"|?*]/g, "_")
    .replace(/\.{2,}/g, ".")
    .replace(/^[.\s]+/, "")
    .replace(/[.\s]+$/, "");
  return Array.from(cleaned).slice(0, maxLength).join("");
}

export async function downloadExport(
  job: ExportJob,
  context: DownloadContext,
): Promise<DownloadedFile> {
  if (job.status !== "completed" || job.download_url === undefined) {
    throw refuse(
      `Export job ${job._id} has no file to download yet (status ${job.status}).`,
      "bad_url",
    );
  }
  const expiresAt = Date.parse(job.download_url_expires_at ?? "");
  if (Number.isNaN(expiresAt)) {
    throw refuse("The export's download URL has no valid expiry time.", "bad_url");
  }
  if (expiresAt <= context.now()) {
    throw refuse(
      `The download URL of export job ${job._id} expired at ${job.download_url_expires_at}; create a new export job to get a fresh one.`,
      "expired",
    );
  }
  const name = exportFileName(job._id, job.file_name ?? "", job.file_ext ?? "");
  const expected = job.file_size;
  if (expected !== undefined && expected > context.maxBytes) {
    throw refuse(
      `Export job ${job._id}'s file is ${expected} bytes, over the ${context.maxBytes}-byte limit (CRM_MAX_DOWNLOAD_MB).`,
      "too_large",
    );
  }
  let url = checkDownloadUrl(job.download_url, context);

  const directory = resolve(context.directory);
  const finalPath = join(directory, name);
  if (!finalPath.startsWith(directory + sep)) {
    throw refuse("Refused to save the export outside the data directory.", "bad_url");
  }
  await mkdir(directory, { recursive: true, mode: 0o700 });
  const tempPath = join(directory, `.${randomBytes(8).toString("hex")}.part`);

  const call = callSignal(context.signal, context.deadline);
  let response: Dispatcher.ResponseData | undefined;
  try {
    for (let hop = 0; ; hop++) {
      response = await context.dispatcher.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: "GET",
        // Deliberately no Authorization: the URL is pre-signed.
        headers: { "user-agent": context.userAgent },
        signal: call.signal,
      });
      if (!REDIRECT_STATUSES.has(response.statusCode)) break;
      await discard(response.body);
      const location = response.headers.location;
      const target = Array.isArray(location) ? location[0] : location;
      if (target === undefined) {
        throw failed(`The download from ${redactUrl(url.href)} redirected without a location.`);
      }
      if (hop + 1 > MAX_REDIRECTS) {
        throw failed(`The download was redirected more than ${MAX_REDIRECTS} times.`);
      }
      url = checkDownloadUrl(new URL(target, url).href, context);
    }
    if (response.statusCode < 200 || response.statusCode >= 300) {
      // The body is not kept even as detail: object-store errors echo the signature back.
      await discard(response.body);
      throw failed(
        `The download from ${redactUrl(url.href)} failed with HTTP ${response.statusCode}.${response.statusCode === 403 ? " The URL may have expired; create a new export job." : ""}`,
        response.statusCode,
      );
    }
    const announced = Number(response.headers["content-length"]);
    if (Number.isFinite(announced) && announced > context.maxBytes) {
      throw failed(
        `The download is ${announced} bytes, over the ${context.maxBytes}-byte limit (CRM_MAX_DOWNLOAD_MB).`,
      );
    }
    const bytes = await streamToFile(response.body, tempPath, context.maxBytes, expected);
    await rename(tempPath, finalPath);
    return { path: finalPath, bytes };
  } catch (error) {
    if (response !== undefined) await discard(response.body);
    await unlink(tempPath).catch(() => undefined);
    if (error instanceof ApiError) throw error;
    throw mapTransportError(error, {
      operation: "download_export",
      callerAborted: call.callerAborted(),
      deadlineExpired: call.deadlineExpired(),
    });
  } finally {
    call.dispose();
  }
}

/** Drops a body we will not read without leaving an unhandled stream error behind. */
async function discard(body: Dispatcher.ResponseData["body"]): Promise<void> {
  body.on("error", () => undefined);
  await body.dump({ limit: 64 * 1024 }).catch(() => undefined);
}

async function streamToFile(
  body: Dispatcher.ResponseData["body"],
  path: string,
  maxBytes: number,
  expected: number | undefined,
): Promise<number> {
  const handle = await open(path, "wx", 0o600);
  let bytes = 0;
  try {
    for await (const chunk of body) {
      const buffer = chunk as Buffer;
      bytes += buffer.length;
      if (bytes > maxBytes) {
        throw failed(
          `The download exceeded the ${maxBytes}-byte limit (CRM_MAX_DOWNLOAD_MB); nothing was kept.`,
        );
      }
      if (expected !== undefined && bytes > expected) {
        throw failed(
          `The download is larger than the ${expected} bytes the export job announced; nothing was kept.`,
        );
      }
      await handle.write(buffer);
    }
    if (expected !== undefined && bytes !== expected) {
      throw failed(
        `The download ended after ${bytes} of the ${expected} bytes the export job announced; nothing was kept. Try again.`,
      );
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
  return bytes;
}
