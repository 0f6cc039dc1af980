import { open } from "node:fs/promises";
import { inflateRawSync } from "node:zlib";
import { AnalysisError } from "../errors.js";

/**
 * Reads an .xlsx (a zip) for the workbook reader (xlsx-cells.ts), which never opens the file
 * itself: zip readers commonly inflate entries without a cap, and lenient ones (JSZip) read a
 * damaged directory differently from a strict one (they shift offsets and read entries past the
 * declared directory), so a check done by a second parser could be bypassed. Here the central
 * directory is read strictly, each workbook part the reader needs is inflated once while its
 * output is counted (declared sizes are not trusted), and only those checked bytes are handed on.
 */

export interface ZipLimits {
  maxEntries: number;
  maxEntryBytes: number;
  maxTotalBytes: number;
  maxSharedStringsBytes: number;
}

/**
 * A scenario export is a summary sheet plus one sheet per node of one row per day (about 600
 * bytes a row), usually a few hundred KB inflated. The reader holds the inflated parts and the
 * cell values, so these caps are what bound the memory of a scenario summary.
 */
export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxEntries: 1000,
  maxEntryBytes: 4 * 1024 ** 2,
  maxTotalBytes: 16 * 1024 ** 2,
  maxSharedStringsBytes: 4 * 1024 ** 2,
};

const EOCD_SIG = 0x06054b50;
const CD_SIG = 0x02014b50;
const LOCAL_SIG = 0x04034b50;
const SHARED_STRINGS = "xl/sharedStrings.xml";

/** The parts a workbook's cell values are read from; everything else is left behind. */
function isNeededPart(name: string): boolean {
  return (
    name === "[Content_Types].xml" ||
    name === "_rels/.rels" ||
    name === "xl/workbook.xml" ||
    name === "xl/_rels/workbook.xml.rels" ||
    name === SHARED_STRINGS ||
    name === "xl/styles.xml" ||
    /^xl\/worksheets\/sheet\d+\.xml$/.test(name)
  );
}

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

interface Entry {
  name: string;
  method: number;
  compressedSize: number;
  localOffset: number;
}

/**
 * The workbook parts of the zip at `path`, inflated and checked against `limits`, keyed by part
 * name (a leading "/" removed, as Excel does).
 */
export async function readCheckedZip(
  path: string,
  size: number,
  limits: ZipLimits = DEFAULT_ZIP_LIMITS,
  signal?: AbortSignal,
): Promise<Map<string, Buffer>> {
  if (size < 22) throw notZip("the file is too small to be a zip archive.");
  const handle = await open(path, "r");
  try {
    const entries = await readDirectory(handle, size, limits);
    const parts = new Map<string, Buffer>();
    let total = 0;
    for (const entry of entries) {
      if (signal?.aborted) throw new AnalysisError("The summary was cancelled.", "aborted");
      const isStrings = entry.name === SHARED_STRINGS;
      const cap = isStrings
        ? Math.min(limits.maxSharedStringsBytes, limits.maxEntryBytes)
        : limits.maxEntryBytes;
      const what = isStrings
        ? `its shared strings part (${SHARED_STRINGS}) inflates to more than ${cap} bytes`
        : `zip part ${JSON.stringify(entry.name)} inflates to more than ${cap} bytes`;
      const data = await inflateCounted(
        handle,
        size,
        entry,
        cap,
        limits.maxTotalBytes - total,
        what,
      );
      total += data.length;
      parts.set(entry.name, data);
    }
    return parts;
  } finally {
    await handle.close();
  }
}

type Handle = Awaited<ReturnType<typeof open>>;

async function readDirectory(handle: Handle, size: number, limits: ZipLimits): Promise<Entry[]> {
  const tailSize = Math.min(size, 22 + 65535);
  const tail = Buffer.alloc(tailSize);
  await handle.read(tail, 0, tailSize, size - tailSize);
  let eocd = -1;
  for (let i = tailSize - 22; i >= 0; i--) {
    // The comment must run exactly to the end of the file, so a signature inside it is no match.
    if (tail.readUInt32LE(i) === EOCD_SIG && i + 22 + tail.readUInt16LE(i + 20) === tailSize) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw notZip("no zip directory found (the file is not a zip, or it is truncated).");
  const eocdAt = size - tailSize + eocd;
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
  if (tail.readUInt16LE(eocd + 4) !== 0 || tail.readUInt16LE(eocd + 8) !== declared) {
    throw notZip("the zip is split over several disks, or its entry counts disagree.");
  }
  // Other zip readers re-base every offset when the directory does not end where the end record
  // starts; accepting such a file would let them see parts this check never counted.
  if (cdOffset + cdSize !== eocdAt) {
    throw notZip(
      "the zip directory does not end where the end record starts (damaged or altered).",
    );
  }
  const cd = Buffer.alloc(cdSize);
  await handle.read(cd, 0, cdSize, cdOffset);
  const entries: Entry[] = [];
  const seen = new Set<string>();
  let p = 0;
  let count = 0;
  while (p < cd.length) {
    if (p + 46 > cd.length || cd.readUInt32LE(p) !== CD_SIG) {
      throw notZip("the zip directory is damaged.");
    }
    count++;
    if (count > declared) throw notZip("the zip directory holds more entries than it declares.");
    const flags = cd.readUInt16LE(p + 8);
    const method = cd.readUInt16LE(p + 10);
    const compressedSize = cd.readUInt32LE(p + 20);
    const nameLen = cd.readUInt16LE(p + 28);
    const extraLen = cd.readUInt16LE(p + 30);
    const commentLen = cd.readUInt16LE(p + 32);
    const localOffset = cd.readUInt32LE(p + 42);
    const next = p + 46 + nameLen + extraLen + commentLen;
    if (next > cd.length) throw notZip("the zip directory is damaged.");
    // Names are taken from the directory only (a Unicode-path extra field is ignored), and the
    // rebuilt zip carries exactly these names, so no reader can see a part under another name.
    let name = cd.toString("utf8", p + 46, p + 46 + nameLen);
    if (name.startsWith("/")) name = name.slice(1);
    p = next;
    if (name.endsWith("/") || !isNeededPart(name)) continue;
    if (seen.has(name)) throw bomb(`zip part ${JSON.stringify(name)} appears twice.`);
    seen.add(name);
    if ((flags & 1) !== 0) throw notZip(`zip part ${JSON.stringify(name)} is encrypted.`);
    if (method !== 0 && method !== 8) {
      throw notZip(
        `zip part ${JSON.stringify(name)} uses an unsupported compression method (${method}).`,
      );
    }
    if (localOffset + 30 + compressedSize > cdOffset) {
      throw notZip(`zip part ${JSON.stringify(name)} points past its data area (truncated?).`);
    }
    entries.push({ name, method, compressedSize, localOffset });
  }
  if (count !== declared) throw notZip("the zip directory holds fewer entries than it declares.");
  // Local headers tell where each part's data starts (their name/extra lengths may differ).
  const local = Buffer.alloc(30);
  for (const entry of entries) {
    await handle.read(local, 0, 30, entry.localOffset);
    if (local.readUInt32LE(0) !== LOCAL_SIG) {
      throw notZip(`zip part ${JSON.stringify(entry.name)} has a damaged header.`);
    }
    entry.localOffset += 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
    if (entry.localOffset + entry.compressedSize > size) {
      throw notZip(`zip part ${JSON.stringify(entry.name)} points past the end of the file.`);
    }
  }
  return entries;
}

/** Inflates one entry, counting output bytes and stopping as soon as a cap is crossed. */
async function inflateCounted(
  handle: Handle,
  size: number,
  entry: Entry,
  cap: number,
  remaining: number,
  what: string,
): Promise<Buffer> {
  const check = (bytes: number): void => {
    if (bytes > cap) throw bomb(`${what}.`);
    if (bytes > remaining) throw bomb("its parts together inflate to more than the total limit.");
  };
  if (entry.localOffset + entry.compressedSize > size) throw notZip("a zip part is truncated.");
  if (entry.method === 0) {
    check(entry.compressedSize);
    const data = Buffer.alloc(entry.compressedSize);
    await handle.read(data, 0, data.length, entry.localOffset);
    return data;
  }
  // One read and one synchronous inflate whose output is capped as it is produced (zlib stops
  // at the cap): a part is at most a few MB, and the streaming inflate it replaces spent more
  // time waiting on the thread pool and joining 16 KB chunks than inflating.
  const compressed = Buffer.allocUnsafe(entry.compressedSize);
  const { bytesRead } = await handle.read(compressed, 0, compressed.length, entry.localOffset);
  const limit = Math.min(cap, remaining);
  let data: Buffer;
  try {
    data = inflateRawSync(compressed.subarray(0, bytesRead), { maxOutputLength: limit + 1 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") check(limit + 1);
    throw notZip(
      `zip part ${JSON.stringify(entry.name)} cannot be decompressed (damaged or truncated).`,
    );
  }
  check(data.length);
  if (bytesRead < compressed.length) {
    throw notZip(
      `zip part ${JSON.stringify(entry.name)} cannot be decompressed (damaged or truncated).`,
    );
  }
  return data;
}
