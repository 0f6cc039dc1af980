import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { createInflateRaw } from "node:zlib";
import { AnalysisError } from "./errors.js";

/**
 * Checks an .xlsx (a zip) before exceljs sees it: exceljs inflates entries without a cap and
 * keeps every shared string in memory, so a small hostile file could exhaust the server. The
 * central directory is read by hand, every entry is inflated once while its output is counted
 * (the sizes declared in the zip are not trusted), and the file is rejected at the first cap
 * crossed.
 */

export interface ZipLimits {
  maxEntries: number;
  maxEntryBytes: number;
  maxTotalBytes: number;
  maxSharedStringsBytes: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxEntries: 2000,
  maxEntryBytes: 64 * 1024 ** 2,
  maxTotalBytes: 128 * 1024 ** 2,
  maxSharedStringsBytes: 16 * 1024 ** 2,
};

export interface ZipEntryInfo {
  name: string;
  method: number;
  compressedSize: number;
  localOffset: number;
  inflatedBytes: number;
}

const EOCD_SIG = 0x06054b50;
const CD_SIG = 0x02014b50;
const LOCAL_SIG = 0x04034b50;

function notZip(detail: string): AnalysisError {
  return new AnalysisError(
    `Not a readable .xlsx file: ${detail} A scenario export is an XLSX (zip) file; export it again with start_export type scenario_daily_metrics.`,
    "malformed_xlsx",
  );
}

function bomb(detail: string): AnalysisError {
  return new AnalysisError(
    `The .xlsx file was rejected before reading: ${detail} This is not what the service exports; use the original downloaded file.`,
    "zip_bomb",
  );
}

export async function inspectZip(
  path: string,
  size: number,
  limits: ZipLimits = DEFAULT_ZIP_LIMITS,
  signal?: AbortSignal,
): Promise<ZipEntryInfo[]> {
  if (size < 22) throw notZip("the file is too small to be a zip archive.");
  const handle = await open(path, "r");
  let entries: ZipEntryInfo[];
  try {
    const tailSize = Math.min(size, 22 + 65535);
    const tail = Buffer.alloc(tailSize);
    await handle.read(tail, 0, tailSize, size - tailSize);
    let eocd = -1;
    for (let i = tailSize - 22; i >= 0; i--) {
      if (tail.readUInt32LE(i) === EOCD_SIG) {
        eocd = i;
        break;
      }
    }
    if (eocd < 0)
      throw notZip("no zip directory found (the file is not a zip, or it is truncated).");
    const declared = tail.readUInt16LE(eocd + 10);
    const cdSize = tail.readUInt32LE(eocd + 12);
    const cdOffset = tail.readUInt32LE(eocd + 16);
    if (declared === 0xffff || cdOffset === 0xffffffff || cdSize === 0xffffffff) {
      throw bomb(
        `the zip uses the ZIP64 extension (65,535 or more entries, or over 4 GB); an export has at most ${limits.maxEntries} parts.`,
      );
    }
    if (declared > limits.maxEntries) {
      throw bomb(
        `it has ${declared} zip entries, more than the ${limits.maxEntries} an export can have.`,
      );
    }
    if (cdOffset + cdSize > size)
      throw notZip("the zip directory points past the end of the file (truncated?).");
    if (cdSize > limits.maxEntries * (46 + 65535 * 3))
      throw bomb("its zip directory is too large.");
    const cd = Buffer.alloc(cdSize);
    await handle.read(cd, 0, cdSize, cdOffset);
    entries = [];
    let p = 0;
    while (p + 46 <= cd.length) {
      if (cd.readUInt32LE(p) !== CD_SIG) throw notZip("the zip directory is damaged.");
      if (entries.length >= limits.maxEntries) {
        throw bomb(`it has more than ${limits.maxEntries} zip entries.`);
      }
      const method = cd.readUInt16LE(p + 10);
      const compressedSize = cd.readUInt32LE(p + 20);
      const nameLen = cd.readUInt16LE(p + 28);
      const extraLen = cd.readUInt16LE(p + 30);
      const commentLen = cd.readUInt16LE(p + 32);
      const localOffset = cd.readUInt32LE(p + 42);
      const name = cd.toString("utf8", p + 46, p + 46 + nameLen);
      if (method !== 0 && method !== 8) {
        throw notZip(
          `zip part ${JSON.stringify(name)} uses an unsupported compression method (${method}).`,
        );
      }
      if (localOffset + 30 + compressedSize > size) {
        throw notZip(
          `zip part ${JSON.stringify(name)} points past the end of the file (truncated?).`,
        );
      }
      entries.push({ name, method, compressedSize, localOffset, inflatedBytes: 0 });
      p += 46 + nameLen + extraLen + commentLen;
    }
    // Local headers tell where each part's data starts (their name/extra lengths may differ).
    const local = Buffer.alloc(30);
    for (const entry of entries) {
      await handle.read(local, 0, 30, entry.localOffset);
      if (local.readUInt32LE(0) !== LOCAL_SIG) {
        throw notZip(`zip part ${JSON.stringify(entry.name)} has a damaged header.`);
      }
      entry.localOffset += 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
    }
  } finally {
    await handle.close();
  }

  let total = 0;
  for (const entry of entries) {
    const cap =
      entry.name === "xl/sharedStrings.xml"
        ? Math.min(limits.maxSharedStringsBytes, limits.maxEntryBytes)
        : limits.maxEntryBytes;
    const what =
      entry.name === "xl/sharedStrings.xml"
        ? `its shared strings part (xl/sharedStrings.xml) inflates to more than ${cap} bytes`
        : `zip part ${JSON.stringify(entry.name)} inflates to more than ${cap} bytes`;
    entry.inflatedBytes = await inflatedSize(
      path,
      entry,
      cap,
      limits.maxTotalBytes - total,
      what,
      signal,
    );
    total += entry.inflatedBytes;
  }
  return entries;
}

/** Inflates one entry, counting output bytes and stopping as soon as a cap is crossed. */
async function inflatedSize(
  path: string,
  entry: ZipEntryInfo,
  cap: number,
  remaining: number,
  what: string,
  signal: AbortSignal | undefined,
): Promise<number> {
  if (entry.compressedSize === 0) return 0;
  const source = createReadStream(path, {
    start: entry.localOffset,
    end: entry.localOffset + entry.compressedSize - 1,
    ...(signal ? { signal } : {}),
  });
  if (entry.method === 0) {
    source.destroy();
    if (entry.compressedSize > cap) throw bomb(`${what}.`);
    if (entry.compressedSize > remaining)
      throw bomb("its parts inflate to more than the total limit.");
    return entry.compressedSize;
  }
  const inflate = createInflateRaw();
  let count = 0;
  try {
    source.pipe(inflate);
    source.on("error", (error) => inflate.destroy(error));
    for await (const chunk of inflate as AsyncIterable<Buffer>) {
      count += chunk.length;
      if (count > cap) throw bomb(`${what}.`);
      if (count > remaining) throw bomb("its parts together inflate to more than the total limit.");
    }
  } catch (error) {
    if (error instanceof AnalysisError) throw error;
    throw notZip(
      `zip part ${JSON.stringify(entry.name)} cannot be decompressed (damaged or truncated).`,
    );
  } finally {
    source.destroy();
    inflate.destroy();
  }
  return count;
}
