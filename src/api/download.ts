import { createHash } from "node:crypto";
import { type FileHandle, mkdir, open, rename, unlink } from "node:fs/promises";
import { join, resolve, sep } from "node:path";
import type { Dispatcher } from "undici";
import { isLoopbackHost } from "../loopback-host.js";
import { ownedTempPath, sweepOrphanTempFiles } from "../orphan-files.js";
import { redact, redactUrl } from "../redact.js";
import { callSignal } from "./call-signal.js";
import { ApiError, DownloadFailedError, DownloadRefusedError } from "./errors.js";
import type { ExportJob } from "./schemas.js";
import { errorCode, mapTransportError } from "./to-api-error.js";
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
/**
 * File systems limit a name to 255 bytes, and a Hangul syllable is 3 bytes in UTF-8: the name
 * from the API is cut by bytes, leaving room for the job ID (at most 64 + 9) and the extension.
 */
const MAX_NAME_BYTES = 150;
const MAX_ID_LENGTH = 64;
/**
 * Bytes received but not yet on disk. The body is never paused (see streamToFile), so a disk
 * slower than the network would otherwise buffer up to the whole file in memory.
 */
const MAX_PENDING_BYTES = 64 * 1024 * 1024;

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
}

type Refusal = DownloadRefusedError["reason"];

function refuse(message: string, reason: Refusal): DownloadRefusedError {
  return new DownloadRefusedError(message, { operation: "download_export", reason });
}

function failed(message: string, status?: number): DownloadFailedError {
  return new DownloadFailedError(message, { operation: "download_export", status });
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
    // Opened before the request, so the body is read the moment it arrives (see streamToFile).
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
      handle,
      directory,
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

/**
 * Runs one file-system step; its failure (no space, no permission, a name too long) is a local
 * problem and must not be reported as the service being unreachable.
 */
async function onDisk<T>(directory: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    const code = errorCode(error) ?? "error";
    throw new DownloadFailedError(
      `Could not write the export to ${redact(directory)}: ${code}. Check CRM_DATA_DIR (free space, permissions).`,
      { operation: "download_export", code },
    );
  }
}

/** The response body failed (a cut connection, an abort) after `bytes` arrived. */
class BodyBroke extends Error {
  constructor(
    readonly bytes: number,
    override readonly cause: unknown,
  ) {
    super("the response body broke off");
  }
}

/**
 * Writes the body into the already open file, reading it at network speed and never pausing it.
 * Undici 7 (nodejs/undici#5360) asserts `!this.paused` in its HTTP/1 parser when the peer closes
 * the connection while the body stream is under backpressure: an exception thrown from the
 * socket's `end` handler, which no caller can catch, ends the process. A file host that closes
 * after part of a file (or after all of it, with `Connection: close`) while we awaited a disk
 * write was enough. The fix in undici 8 (#5474) needs Node >= 22.19; we support 20.18. So the
 * body flows without backpressure into a queue of writes, and the queue is bounded by
 * MAX_PENDING_BYTES instead (a disk that slow fails the download, not the process).
 */
function streamToFile(
  body: Dispatcher.ResponseData["body"],
  handle: FileHandle,
  directory: string,
  maxBytes: number,
  expected: number | undefined,
  onProgress: ((bytes: number) => void) | undefined,
): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let received = 0;
    let pending = 0;
    let written = 0;
    let failure: unknown;
    let writes: Promise<void> = Promise.resolve();
    const fail = (error: unknown) => {
      if (failure !== undefined) return;
      failure = error;
      body.destroy();
      // The file is closed and removed by the caller: wait until no write is in flight.
      writes.then(
        () => reject(error),
        () => reject(error),
      );
    };
    body.on("data", (chunk: Buffer) => {
      if (failure !== undefined) return;
      received += chunk.length;
      if (received > maxBytes) {
        fail(
          failed(
            `The download exceeded the ${maxBytes}-byte limit (CRM_MAX_DOWNLOAD_MB); nothing was kept.`,
          ),
        );
        return;
      }
      if (expected !== undefined && received > expected) {
        fail(
          failed(
            `The download is larger than the ${expected} bytes the export job announced; nothing was kept.`,
          ),
        );
        return;
      }
      pending += chunk.length;
      if (pending > MAX_PENDING_BYTES) {
        fail(
          failed(
            `Writing the export to ${redact(directory)} fell more than ${MAX_PENDING_BYTES} bytes behind the download; nothing was kept. Check CRM_DATA_DIR (a slow or network disk).`,
          ),
        );
        return;
      }
      writes = writes.then(async () => {
        await onDisk(directory, () => handle.write(chunk));
        pending -= chunk.length;
        written += chunk.length;
        onProgress?.(written);
      });
      writes.catch(fail);
    });
    body.on("error", (error: unknown) => fail(new BodyBroke(received, error)));
    body.on("end", () => {
      writes
        .then(async () => {
          if (failure !== undefined) return;
          if (expected !== undefined && received !== expected) {
            throw failed(
              `The download ended after ${received} of the ${expected} bytes the export job announced; nothing was kept.`,
            );
          }
          await onDisk(directory, () => handle.sync());
          resolve(received);
        })
        .catch(fail);
    });
  });
}
