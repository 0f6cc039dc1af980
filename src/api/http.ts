import type { Dispatcher } from "undici";
import type { z } from "zod";
import { redact } from "../redact.js";
import { callSignal } from "./call-signal.js";
import { type ApiOperation, InvalidResponseError } from "./errors.js";
import { bodyDetail, mapHttpError, mapTransportError, operationLabel } from "./to-api-error.js";

/**
 * The one function that speaks HTTP to the API: JSON in, JSON out, mapped errors. Retries live
 * in retry.ts; this is a single attempt.
 */

/** Bodies larger than this are not JSON answers we expect (metrics for the longest window fit easily). */
const MAX_JSON_BYTES = 64 * 1024 * 1024;

export interface JsonRequest<T> {
  operation: ApiOperation;
  method: "GET" | "POST";
  url: URL;
  /** The whole Authorization header value (spec 5). */
  authorization: string;
  body?: unknown;
  schema: z.ZodType<T>;
  signal?: AbortSignal | undefined;
  deadline?: number | undefined;
}

export interface HttpContext {
  dispatcher: Dispatcher;
  userAgent: string;
  now: () => number;
}

export async function requestJson<T>(context: HttpContext, request: JsonRequest<T>): Promise<T> {
  const { operation } = request;
  const call = callSignal(request.signal, request.deadline);
  const headers: Record<string, string> = {
    authorization: request.authorization,
    accept: "application/json",
    "user-agent": context.userAgent,
  };
  if (request.body !== undefined) headers["content-type"] = "application/json";
  let status: number;
  let text: string;
  let retryAfter: string | undefined;
  try {
    const response = await context.dispatcher.request({
      origin: request.url.origin,
      path: `${request.url.pathname}${request.url.search}`,
      method: request.method,
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: call.signal,
    });
    status = response.statusCode;
    const header = response.headers["retry-after"];
    retryAfter = Array.isArray(header) ? header[0] : header;
    text = await readText(response.body, MAX_JSON_BYTES, operation);
  } catch (error) {
    if (error instanceof InvalidResponseError) throw error;
    throw mapTransportError(error, {
      operation,
      callerAborted: call.callerAborted(),
      deadlineExpired: call.deadlineExpired(),
    });
  } finally {
    call.dispose();
  }

  if (status < 200 || status >= 300) {
    throw mapHttpError({ operation, status, body: text, retryAfter, now: context.now() });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new InvalidResponseError(
      `${operationLabel(operation)} failed: the service answered with a body that is not JSON.`,
      { operation, status, detail: bodyDetail(text) },
    );
  }
  const parsed = request.schema.safeParse(json);
  if (!parsed.success) {
    throw new InvalidResponseError(
      `${operationLabel(operation)} failed: the service's response does not match the API: ${describeIssues(parsed.error)}.${operation === "create_export_job" ? createdJobHint(json) : ""}`,
      { operation, status, detail: bodyDetail(text) },
    );
  }
  return parsed.data;
}

/**
 * A 2xx create whose body does not validate most likely did create the job; creating another
 * would spend the rate budget, so point at the job the body names, if it names one.
 */
function createdJobHint(json: unknown): string {
  if (typeof json !== "object" || json === null || !("_id" in json)) return "";
  const id = json._id;
  if (typeof id !== "string" || !/^[\w.-]{1,128}$/.test(id)) return "";
  const shown = redact(id);
  return ` The job was probably created (id ${shown}); use check_export with job_id "${shown}" instead of creating another.`;
}

async function readText(
  body: Dispatcher.ResponseData["body"],
  limit: number,
  operation: ApiOperation,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limit) {
      body.on("error", () => undefined);
      body.destroy();
      throw new InvalidResponseError(
        `${operationLabel(operation)} failed: the service's response is too large.`,
        { operation },
      );
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** `campaigns.0.tasks.3.sent_count: expected number` (and how many more problems). */
export function describeIssues(error: z.ZodError): string {
  const issues = error.issues;
  const first = issues[0];
  if (first === undefined) return "invalid body";
  const path = first.path.length === 0 ? "(body)" : first.path.map(String).join(".");
  let what: string;
  if (first.code === "invalid_type") {
    what = `expected ${first.expected}`;
    // Zod leaves the input out of issues; its message still says what was received.
    if (/received undefined/.test(first.message)) what += ", missing";
  } else if (first.code === "invalid_value") {
    what = `expected one of ${first.values.map((v) => JSON.stringify(v)).join(", ")}`;
  } else {
    what = first.message;
  }
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : "";
  return `${path}: ${what}${more}`;
}
