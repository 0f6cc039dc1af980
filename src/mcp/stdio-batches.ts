import { PassThrough, type Readable, type Writable } from "node:stream";
import {
  isJSONRPCRequest,
  type JSONRPCMessage,
  type MessageExtraInfo,
  parseJSONRPCMessage,
  type RequestId,
  STDIO_DEFAULT_MAX_BUFFER_SIZE,
  type Transport,
} from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";

/**
 * Stdio with JSON-RPC batches. MCP 2025-03-26 requires a server to accept a batch (a JSON array
 * of messages on one line) and answer it with one array of the responses; the versions before
 * and after it have no batches. The SDK's stdio transport reads only single messages, so a batch
 * line got no answer at all.
 *
 * Here each line is read first: a single message goes on to the SDK's transport unchanged. A
 * batch, once 2025-03-26 is negotiated, is split into its messages, which the server handles as
 * if they came one by one, and the responses to its requests are held back and written together
 * as one array when the last is ready (progress and log notifications still go out as they
 * happen). Under any other version a batch is refused with one Invalid Request error. A line that
 * is not a JSON-RPC message is reported as one short transport error and skipped.
 */

/** The one protocol version whose JSON-RPC layer includes batches. */
export const BATCH_PROTOCOL_VERSION = "2025-03-26";

const INVALID_REQUEST = -32600;

interface PendingBatch {
  /** Request ids of the batch still without a response. */
  waiting: Set<RequestId>;
  /** The server's responses, and ours for messages refused within the batch (id null). */
  responses: unknown[];
}

export class StdioBatchTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?:
    | (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void)
    | undefined;

  /** What the SDK's transport reads: the input, a batch already split into single lines. */
  private readonly lines = new PassThrough();
  private readonly inner: StdioServerTransport;
  private buffer: Buffer = Buffer.alloc(0);
  private negotiated: string | undefined;
  /** initialize requests passed on and not answered yet: the lines after them wait. */
  private readonly initializing = new Set<RequestId>();
  /**
   * Lines read while an initialize is unanswered: whether a batch among them is answered or
   * refused depends on the version it negotiates, and they keep their order.
   */
  private held: Buffer[] = [];
  private readonly batches: PendingBatch[] = [];

  constructor(
    private readonly stdin: Readable = process.stdin,
    private readonly stdout: Writable = process.stdout,
  ) {
    this.inner = new StdioServerTransport(this.lines, stdout);
  }

  async start(): Promise<void> {
    this.inner.onmessage = (message: JSONRPCMessage) => {
      this.observeInbound(message);
      this.onmessage?.(message);
    };
    this.inner.onerror = (error) => this.onerror?.(error);
    this.inner.onclose = () => {
      this.detach();
      this.onclose?.();
    };
    await this.inner.start();
    if (this.stdin.readableEnded || this.stdin.destroyed) this.oninputend();
    this.stdin.on("data", this.ondata);
    this.stdin.on("error", this.oninputerror);
    this.stdin.on("end", this.oninputend);
    this.stdin.on("close", this.oninputend);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const id = "id" in message && !("method" in message) ? message.id : undefined;
    if (id !== undefined && this.initializing.delete(id)) {
      // The answer to initialize: written first, then the lines that waited for it.
      this.noteVersion(message);
      try {
        await this.inner.send(message);
      } finally {
        if (this.initializing.size === 0) this.release();
      }
      return;
    }
    const batch =
      id === undefined || id === null ? undefined : this.batches.find((b) => b.waiting.has(id));
    if (batch === undefined || id === undefined || id === null) {
      return this.inner.send(message);
    }
    batch.waiting.delete(id);
    batch.responses.push(message);
    return this.flushIfAnswered(batch);
  }

  async close(): Promise<void> {
    this.detach();
    await this.inner.close();
  }

  private readonly ondata = (chunk: Buffer | string) => {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    this.buffer = this.buffer.length === 0 ? bytes : Buffer.concat([this.buffer, bytes]);
    for (;;) {
      const end = this.buffer.indexOf(0x0a);
      if (end === -1) break;
      const line = this.buffer.subarray(0, end + 1);
      this.buffer = this.buffer.subarray(end + 1);
      this.route(line);
    }
    // A line that never ends is handed on, so the SDK's transport applies its own size limit.
    if (this.buffer.length > STDIO_DEFAULT_MAX_BUFFER_SIZE) {
      this.lines.write(this.buffer);
      this.buffer = Buffer.alloc(0);
    }
  };

  private readonly oninputerror = (error: Error) => this.onerror?.(error);

  private readonly oninputend = () => {
    const rest = this.buffer;
    this.buffer = Buffer.alloc(0);
    if (rest.length > 0) this.route(rest);
    this.ended = true;
    this.endIfDone();
  };

  private ended = false;

  /** Ends the SDK's input once the client's input has ended and nothing is held back. */
  private endIfDone(): void {
    if (this.ended && this.initializing.size === 0 && this.held.length === 0) this.lines.end();
  }

  private detach(): void {
    this.stdin.off("data", this.ondata);
    this.stdin.off("error", this.oninputerror);
    this.stdin.off("end", this.oninputend);
    this.stdin.off("close", this.oninputend);
  }

  private route(line: Buffer): void {
    if (this.initializing.size > 0) {
      this.held.push(line);
      return;
    }
    const text = line.toString("utf8").trim();
    if (text === "") return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      this.ignore(text, "is not JSON");
      return;
    }
    if (Array.isArray(parsed)) {
      this.batch(parsed);
      return;
    }
    // Checked here rather than by the SDK's transport, which skips a line that is not JSON
    // without a word and reports one that is not JSON-RPC with its schema's every issue.
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(parsed);
    } catch {
      this.ignore(text, "is JSON but not a JSON-RPC 2.0 message");
      return;
    }
    if (isJSONRPCRequest(message) && message.method === "initialize") {
      this.initializing.add(message.id);
    }
    this.lines.write(line);
  }

  /** A line that is no message: one short transport error, and the connection goes on. */
  private ignore(text: string, what: string): void {
    const bytes = Buffer.byteLength(text);
    this.onerror?.(new Error(`a line on stdin (${bytes} bytes) ${what}; it was ignored`));
  }

  private batch(items: unknown[]): void {
    if (this.negotiated !== BATCH_PROTOCOL_VERSION) {
      this.writeLine(
        invalidRequest(
          `JSON-RPC batches exist only in MCP protocol version ${BATCH_PROTOCOL_VERSION}, and ${this.negotiated === undefined ? "no version was negotiated with initialize" : `this connection uses ${this.negotiated}`}; send each message on a line of its own.`,
        ),
      );
      return;
    }
    if (items.length === 0) {
      this.writeLine(invalidRequest("the batch is empty; send at least one message."));
      return;
    }
    const batch: PendingBatch = { waiting: new Set(), responses: [] };
    const accepted: JSONRPCMessage[] = [];
    items.forEach((item, index) => {
      let message: JSONRPCMessage;
      try {
        message = parseJSONRPCMessage(item);
      } catch {
        batch.responses.push(
          invalidRequest(`message ${index + 1} of the batch is not a JSON-RPC 2.0 message.`),
        );
        return;
      }
      if (isJSONRPCRequest(message) && message.method === "initialize") {
        // 2025-03-26: "The initialize request MUST NOT be part of a JSON-RPC batch".
        batch.responses.push(
          invalidRequest("initialize cannot be part of a batch; send it on its own.", message.id),
        );
        return;
      }
      if (isJSONRPCRequest(message)) batch.waiting.add(message.id);
      accepted.push(message);
    });
    // Registered before any message is handled, so no response can pass by it.
    this.batches.push(batch);
    for (const message of accepted) this.lines.write(`${JSON.stringify(message)}\n`);
    this.flushIfAnswered(batch).catch((error: unknown) =>
      this.onerror?.(error instanceof Error ? error : new Error(String(error))),
    );
  }

  /** Writes the batch's responses as one array once every request in it has its response. */
  private async flushIfAnswered(batch: PendingBatch): Promise<void> {
    if (batch.waiting.size > 0) return;
    const at = this.batches.indexOf(batch);
    if (at === -1) return;
    this.batches.splice(at, 1);
    // A batch of notifications and responses only gets no answer (JSON-RPC 2.0, section 6).
    if (batch.responses.length > 0) await this.writeLine(batch.responses);
  }

  private writeLine(value: unknown): Promise<void> {
    return new Promise((resolve, reject) => {
      this.stdout.write(`${JSON.stringify(value)}\n`, (error) =>
        error ? reject(error) : resolve(),
      );
    });
  }

  private observeInbound(message: JSONRPCMessage): void {
    // A cancelled request gets no response (MCP cancellation), so its batch stops waiting.
    if ("method" in message && message.method === "notifications/cancelled") {
      const id = (message.params as { requestId?: RequestId } | undefined)?.requestId;
      if (id === undefined) return;
      for (const batch of [...this.batches]) {
        if (batch.waiting.delete(id)) {
          this.flushIfAnswered(batch).catch((error: unknown) =>
            this.onerror?.(error instanceof Error ? error : new Error(String(error))),
          );
        }
      }
    }
  }

  private noteVersion(message: JSONRPCMessage): void {
    if (!("result" in message)) return;
    const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
    if (typeof version === "string") this.negotiated = version;
  }

  /** Routes the lines held back while initialize was unanswered, in their order. */
  private release(): void {
    const held = this.held;
    this.held = [];
    for (const line of held) this.route(line);
    this.endIfDone();
  }
}

function invalidRequest(detail: string, id: RequestId | null = null) {
  return {
    jsonrpc: "2.0" as const,
    id,
    error: { code: INVALID_REQUEST, message: `Invalid Request: ${detail}` },
  };
}
