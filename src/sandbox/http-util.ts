import type { IncomingMessage } from "node:http";

/**
 * What a route answers. Routes return replies instead of writing to the socket, so fault
 * injection can replace or drop an answer after the request was really processed.
 */
export interface JsonReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * Error bodies (the spec does not show their shape): `{"code": "...", "message": "..."}`, with
 * `code` only where the spec names one (UnAuthorized, ResourceNotFound, LimitExceeded,
 * ResourceNotReady) or for the metrics endpoint's InvalidParameter.
 */
export function errorReply(
  status: number,
  message: string,
  code?: string,
  headers?: Record<string, string>,
): JsonReply {
  const body = code === undefined ? { message } : { code, message };
  return headers === undefined ? { status, body } : { status, body, headers };
}

export const MAX_BODY_BYTES = 1 << 20;

export class BodyTooLargeError extends Error {}

/** Reads the whole request body (at most 1 MiB) as text. */
export async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of req) {
    const buffer = part as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES) throw new BodyTooLargeError("request body over 1 MiB");
    parts.push(buffer);
  }
  return Buffer.concat(parts).toString("utf8");
}

/** Parses a JSON object body; undefined when it is not valid JSON or not an object. */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
    return value as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
