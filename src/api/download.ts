import { type FileHandle, mkdir, open, rename, unlink } from "node:fs/promises";
import { join, resolve, sep } from "node:path";
import type { Dispatcher } from "undici";
import { ownedTempPath, sweepOrphanTempFiles } from "../file-io/orphan-files.js";
import { redactUrl } from "../redact.js";
import { callSignal } from "./call-signal.js";
import { checkDownloadUrl, exportFileName, refuse } from "./download-checks.js";
import { BodyBroke, failed, onDisk, streamToFile, type WriteChunks } from "./download-write.js";
import { ApiError } from "./errors.js";
import type { ExportJob } from "./schemas.js";
import { mapTransportError } from "./to-api-error.js";
import type { DownloadedFile } from "./types.js";

/**
 * Downloads a completed job's pre-signed `download_url`. Everything that can be checked is checked
 * before connecting (expiry, scheme, host, announced size); every redirect hop is checked again.
 * No Authorization header is ever sent: the URL carries its own signature and a key sent to a
 * file host would leak to a third party. The file appears under its final name only once complete.
 */

const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export interface DownloadContext {
  dispatcher: Dispatcher;
  userAgent: string;
  now: () => number;
  /** Host names of the API base URLs; always allowed. */
  apiHosts: string[];
  /** Extra allowed hosts; `undefined` allows any host. */
  downloadHosts: string[] | undefined;
  /**
   * The service itself runs on this machine (its base URL is loopback, e.g. the sandbox): only
   * then may a download URL point at a loopback host. A remote service's URL (or a redirect)
   * aimed at 127.0.0.1 would reach local services (SSRF).
   */
  localService?: boolean | undefined;
  /**
   * Origins (scheme, host, port) of the configured service (base URL, realtime base URL): the
   * only places plain http may go. Any other http URL, even another port or address on this
   * machine (127.0.0.2, a metadata endpoint behind a local proxy), is refused before connecting.
   */
  serviceOrigins?: readonly string[] | undefined;
  maxBytes: number;
  /** Directory the finished file lands in. */
  directory: string;
  signal?: AbortSignal | undefined;
  deadline?: number | undefined;
  /** Called with the bytes written so far, after each chunk reaches the temporary file. */
  onProgress?: ((bytes: number) => void) | undefined;
  /** How chunks reach the temporary file (default: writev at its position); tests slow it down. */
  writeChunks?: WriteChunks | undefined;
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
  // Named after this process, so a sweep can tell it from the leftovers of a killed one.
  const tempPath = ownedTempPath(`${directory}${sep}`, "part");

  const call = callSignal(context.signal, context.deadline);
  let response: Dispatcher.ResponseData | undefined;
  let handle: FileHandle | undefined;
  try {
    await onDisk(directory, () => mkdir(directory, { recursive: true, mode: 0o700 }));
    await sweepOrphanTempFiles([directory]);
    // Opened before the request: a data folder that cannot be written fails before connecting.
    handle = await onDisk(directory, () => open(tempPath, "wx", 0o600));
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
      url = checkDownloadUrl(new URL(target, url).href, context, url);
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
    const bytes = await streamToFile(
      response.body,
      { handle, directory, write: context.writeChunks },
      context.maxBytes,
      expected,
      context.onProgress,
    );
    const written = handle;
    handle = undefined;
    await onDisk(directory, () => written.close());
    await onDisk(directory, () => rename(tempPath, finalPath));
    return { path: finalPath, bytes };
  } catch (error) {
    if (response !== undefined) await discard(response.body);
    await handle?.close().catch(() => undefined);
    await unlink(tempPath).catch(() => undefined);
    if (error instanceof ApiError) throw error;
    if (error instanceof BodyBroke && !call.callerAborted() && !call.deadlineExpired()) {
      throw failed(
        `The download from ${redactUrl(url.href)} broke off after ${error.bytes}${expected === undefined ? "" : ` of the ${expected}`} bytes (the connection closed early); nothing was kept.`,
      );
    }
    throw mapTransportError(error instanceof BodyBroke ? error.cause : error, {
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
