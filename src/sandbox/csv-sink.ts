import type { FileHandle } from "node:fs/promises";

/** Two buffers: one is filled while the other is being written. */
const BUFFER_BYTES = 1 << 20;

/**
 * Text and bytes into a file through two preallocated 1 MiB buffers: at most one is being
 * written while the next is filled, so memory stays bounded whatever the file's size. Rows are
 * encoded straight into a buffer: building one big string per chunk made the garbage collector
 * the bottleneck.
 */
export class CsvSink {
  private readonly buffers = [Buffer.allocUnsafe(BUFFER_BYTES), Buffer.allocUnsafe(BUFFER_BYTES)];
  private current = 0;
  private buffer = this.buffers[0] as Buffer;
  private used = 0;
  private pending: Promise<unknown> = Promise.resolve();
  /** Bytes handed to the file so far. */
  bytes = 0;

  constructor(
    private readonly file: FileHandle,
    private readonly signal: AbortSignal | undefined,
  ) {}

  /** Encodes `text` when it surely fits in the current buffer; false when `put` must do it. */
  tryPut(text: string): boolean {
    // A UTF-16 code unit never takes more than 3 bytes in UTF-8.
    if (this.used + text.length * 3 > BUFFER_BYTES) return false;
    this.used += this.buffer.write(text, this.used, "utf8");
    return true;
  }

  async put(text: string): Promise<void> {
    if (this.tryPut(text)) return;
    await this.flush();
    if (!this.tryPut(text)) await this.writeWhole(Buffer.from(text, "utf8"));
  }

  /** Copies `bytes` when they fit in the current buffer; false when `putBytes` must do it. */
  tryPutBytes(bytes: Uint8Array): boolean {
    if (this.used + bytes.length > BUFFER_BYTES) return false;
    this.buffer.set(bytes, this.used);
    this.used += bytes.length;
    return true;
  }

  /** Copies `bytes` (which may be reused once this resolves). */
  async putBytes(bytes: Uint8Array): Promise<void> {
    if (this.used + bytes.length > BUFFER_BYTES) {
      await this.flush();
      if (bytes.length > BUFFER_BYTES) {
        await this.writeWhole(Buffer.from(bytes));
        return;
      }
    }
    this.buffer.set(bytes, this.used);
    this.used += bytes.length;
  }

  private async writeWhole(data: Buffer): Promise<void> {
    await this.pending;
    this.bytes += data.length;
    this.pending = this.file.write(data);
  }

  /** Hands the filled buffer to the file (waiting for the one before); throws when aborted. */
  async flush(): Promise<void> {
    this.signal?.throwIfAborted();
    await this.pending;
    if (this.used === 0) return;
    const full = this.buffer.subarray(0, this.used);
    this.bytes += this.used;
    this.pending = this.file.write(full);
    this.current = 1 - this.current;
    this.buffer = this.buffers[this.current] as Buffer;
    this.used = 0;
  }

  /** Writes what is left and waits for the file; `settle` only waits (after a failure). */
  async finish(): Promise<void> {
    await this.flush();
    await this.pending;
  }

  async settle(): Promise<void> {
    await this.pending.catch(() => undefined);
  }
}
