import type { IncomingMessage, ServerResponse } from "node:http";

/** Reading an HTTP request's parts and writing JSON replies, for the MCP endpoint's checks. */

/** The body, or "too large" as soon as it passes `max` bytes (the rest is not read). */
export async function readBody(req: IncomingMessage, max: number): Promise<Buffer | "too large"> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > max) return "too large";
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

export function pathOf(req: IncomingMessage): string {
  const raw = req.url ?? "/";
  const query = raw.indexOf("?");
  return query === -1 ? raw : raw.slice(0, query);
}

export function bearer(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match?.[1];
}

export function bracketed(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

export function rpcError(code: number, message: string) {
  return { jsonrpc: "2.0", error: { code, message }, id: null };
}

export function reply(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(text),
  });
  res.end(text);
}
