import { createHash } from "node:crypto";
import diagnostics from "node:diagnostics_channel";
import { readFile } from "node:fs/promises";
import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Agent } from "undici";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type DownloadContext, downloadExport } from "../../src/api/download.js";
import { SINK_BUFFER_BYTES, type WriteChunks, writeChunks } from "../../src/api/download-write.js";
import { DownloadFailedError } from "../../src/api/errors.js";
import type { ExportJob } from "../../src/api/schemas.js";
import { listFiles, tempDir } from "./support.js";

/**
 * A disk much slower than the network: the download must wait for it (the body paused, the
 * host's sending held back by TCP), not queue the file in memory or give up. The disk is the
 * real temporary file behind a writer throttled to 5 MB/s; the host is a loopback server that
 * sends as fast as the client reads.
 */

const DISK_BYTES_PER_SECOND = 5_000_000;
/** The most a download may hold in memory: the sink's buffer plus undici's and the socket's. */
const MEMORY_BOUND = 2 * 1024 * 1024;
const CHUNK = 64 * 1024;
const NOW = Date.parse("2026-11-22T10:00:00Z");

/** What the host sends for one request: `sent` bytes of a `size`-byte file, then FIN. */
let plan: { size: number; sent: number } = { size: 0, sent: 0 };
/** sha256 of what the host sent on its last connection. */
let sentHash = "";
let server: Server;
let origin = "";

/** Chunk `i` of the file: a pattern that makes a lost, repeated or reordered chunk visible. */
function chunkAt(index: number, length: number): Buffer {
  const chunk = Buffer.alloc(length, index % 251);
  chunk.writeUInt32BE(index, 0);
  return chunk;
}

async function sendBody(sock: Socket): Promise<void> {
  const { size, sent } = plan;
  sock.write(
    `HTTP/1.1 200 OK\r\nContent-Length: ${size}\r\nContent-Type: text/csv\r\nConnection: close\r\n\r\n`,
  );
  const hash = createHash("sha256");
  for (let offset = 0, index = 0; offset < sent; offset += CHUNK, index++) {
    const chunk = chunkAt(index, Math.min(CHUNK, sent - offset));
    hash.update(chunk);
    // The host sends as fast as the connection takes it, and no faster.
    if (!sock.write(chunk)) {
      await new Promise<void>((resolve, reject) => {
        const gone = () => reject(new Error("the client went away"));
        sock.once("close", gone);
        sock.once("drain", () => {
          sock.off("close", gone);
          resolve();
        });
      });
    }
  }
  sentHash = hash.digest("hex");
  sock.end();
}

beforeAll(async () => {
  server = createServer((sock) => {
    sock.on("error", () => undefined);
    sock.once("data", () => {
      sendBody(sock).catch(() => sock.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

let dir: { path: string; cleanup: () => Promise<void> };
let dispatcher: Agent;
beforeEach(async () => {
  dir = await tempDir();
  dispatcher = new Agent({ allowH2: false });
});
afterEach(async () => {
  await dispatcher.close();
  await dir.cleanup();
});

function job(size: number): ExportJob {
  return {
    _id: "job-slow-disk",
    application_id: "app",
    type: "campaign_event_data",
    status: "completed",
    campaign_id: "cmp",
    file_name: "campaign_cmp",
    file_ext: "csv",
    file_size: size,
    download_url: `${origin}/export.csv?X-Sig=signature`,
    download_url_expires_at: "2026-11-22T11:00:00Z",
    created_at: "2026-11-22T00:00:00Z",
    updated_at: "2026-11-22T00:00:00Z",
  };
}

function context(write: WriteChunks, onProgress?: (bytes: number) => void): DownloadContext {
  return {
    dispatcher,
    userAgent: "crm-insights-mcp-test",
    now: () => NOW,
    apiHosts: ["127.0.0.1"],
    downloadHosts: undefined,
    localService: true,
    serviceOrigins: [origin],
    maxBytes: 256 * 1024 * 1024,
    directory: dir.path,
    writeChunks: write,
    onProgress,
  };
}

/**
 * The file writes, throttled to `bytesPerSecond` from the first write on. At each write it
 * samples how many bytes this process has read from the host's connection but not yet written:
 * everything the download holds in memory, wherever it waits (socket, undici, pipeline).
 */
function slowDisk(bytesPerSecond: number) {
  let socket: Socket | undefined;
  const port = Number(new URL(origin).port);
  const onConnected = (message: unknown) => {
    const { connectParams, socket: connected } = message as {
      connectParams: { port: string | number };
      socket: Socket;
    };
    if (Number(connectParams.port) === port) socket = connected;
  };
  diagnostics.subscribe("undici:client:connected", onConnected);
  let started: number | undefined;
  let written = 0;
  let peakHeld = 0;
  const sample = () => {
    if (socket !== undefined) peakHeld = Math.max(peakHeld, socket.bytesRead - written);
  };
  const write: WriteChunks = async (file, chunks) => {
    sample();
    started ??= performance.now();
    const bytes = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
    const due = started + ((written + bytes) / bytesPerSecond) * 1000;
    const wait = due - performance.now();
    // The slow disk under test (its write rate), not a wait for an event.
    if (wait > 0) await sleep(wait);
    sample();
    await writeChunks(file, chunks);
    written += bytes;
  };
  return {
    write,
    peakHeld: () => peakHeld,
    stop: () => diagnostics.unsubscribe("undici:client:connected", onConnected),
  };
}

/** Resolves when undici reports an error on a request to the test's host (here: the cut). */
function requestError() {
  let report: () => void = () => undefined;
  const reported = new Promise<void>((resolve) => {
    report = resolve;
  });
  const onError = (message: unknown) => {
    const { request } = message as { request: { origin?: string | URL } };
    if (String(request.origin) === origin) report();
  };
  diagnostics.subscribe("undici:request:error", onError);
  return { reported, stop: () => diagnostics.unsubscribe("undici:request:error", onError) };
}

describe("a disk slower than the network", () => {
  it("makes the download slower, not failed, and holds under 2 MiB in memory", async () => {
    const size = 24 * 1024 * 1024;
    plan = { size, sent: size };
    const disk = slowDisk(DISK_BYTES_PER_SECOND);
    const progress: number[] = [];
    try {
      const file = await downloadExport(
        job(size),
        context(disk.write, (bytes) => progress.push(bytes)),
      );
      expect(file.bytes).toBe(size);
      const content = await readFile(file.path);
      expect(content.length).toBe(size);
      expect(createHash("sha256").update(content).digest("hex")).toBe(sentHash);
      expect(progress.at(-1)).toBe(size);
      expect(progress).toEqual([...progress].sort((a, b) => a - b));
      // The disk really was behind: the sink's buffer filled up before the body was paused...
      expect(disk.peakHeld()).toBeGreaterThan(SINK_BUFFER_BYTES / 2);
      // ...and nothing beyond it was read from the host: without backpressure the process
      // would have held most of the 24 MiB.
      expect(disk.peakHeld()).toBeLessThan(MEMORY_BOUND);
    } finally {
      disk.stop();
    }
  });

  it("a host that closes early while the body waits for the disk: every byte that arrived is counted, nothing kept", async () => {
    const size = 6 * 1024 * 1024;
    const sent = 3 * 1024 * 1024;
    plan = { size, sent };
    const disk = slowDisk(DISK_BYTES_PER_SECOND);
    try {
      const error = await downloadExport(job(size), context(disk.write)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DownloadFailedError);
      expect((error as Error).message).toBe(
        `The download from ${origin}/export.csv broke off after ${sent} of the ${size} bytes (the connection closed early); nothing was kept.`,
      );
      expect(await listFiles(dir.path)).toEqual([]);
    } finally {
      disk.stop();
    }
  });

  it("bytes still waiting in the body when the host's close arrives count too", async () => {
    // The disk holds every write until undici has reported the cut: the sink fills to its
    // buffer, the rest of what the host sent waits in the body, and the error arrives then.
    // That rest stays under undici's 64 KiB body buffer, so the parser never pauses and always
    // reads the host's close; where the sink's buffer stops varies, so several cuts are tried.
    for (let extra = 4; extra <= 48; extra += 4) {
      const size = 2 * 1024 * 1024;
      const sent = SINK_BUFFER_BYTES + extra * 1024;
      plan = { size, sent };
      const cut = requestError();
      const held: WriteChunks = async (file, chunks) => {
        await cut.reported;
        await writeChunks(file, chunks);
      };
      try {
        const error = await downloadExport(job(size), context(held)).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DownloadFailedError);
        expect((error as Error).message).toContain(
          ` broke off after ${sent} of the ${size} bytes `,
        );
        expect(await listFiles(dir.path)).toEqual([]);
      } finally {
        cut.stop();
      }
    }
  });

  it("a disk that fails part-way is reported as the disk's failure and leaves no file", async () => {
    const size = 4 * 1024 * 1024;
    plan = { size, sent: size };
    let written = 0;
    const failing: WriteChunks = async (file, chunks) => {
      if (written >= 1024 * 1024) {
        throw Object.assign(new Error("no space left on device"), { code: "ENOSPC" });
      }
      await writeChunks(file, chunks);
      written += chunks.reduce((sum, chunk) => sum + chunk.length, 0);
    };
    const error = await downloadExport(job(size), context(failing)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DownloadFailedError);
    expect((error as DownloadFailedError).code).toBe("ENOSPC");
    expect((error as Error).message).toMatch(
      /^Could not write the export to .*: ENOSPC\. Check CRM_DATA_DIR/,
    );
    expect(await listFiles(dir.path)).toEqual([]);
  });
});
