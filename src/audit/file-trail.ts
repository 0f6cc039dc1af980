import { randomBytes } from "node:crypto";
import { appendFile, mkdir, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { auditRecord } from "./audit-arguments.js";
import {
  type AuditCall,
  type AuditQuery,
  type AuditRecord,
  type AuditTrail,
  kindOfName,
} from "./audit-record.js";
import { notWritten } from "./not-written.js";
import { settleWithin } from "./settle-within.js";

/**
 * The audit trail as JSON lines in `<data folder>/audit/`: `calls.jsonl` is written, and when it
 * passes `maxBytes` it is renamed to `calls-<time>-<random>.jsonl`; the newest `keep` of those
 * stay, older ones are deleted, so the trail never takes more than (keep + 1) x maxBytes.
 *
 * Each record is one append of one line (O_APPEND), so server processes sharing the data folder
 * interleave whole lines; a process that rotates while another appends loses nothing (the line
 * lands in whichever file the name pointed to). Files are readable by their owner only.
 */
export interface FileTrailOptions {
  maxBytes?: number;
  keep?: number;
  /** How long record() waits for its write before returning (the write goes on). */
  waitMs?: number;
}

const CURRENT = "calls.jsonl";
const ROTATED = /^calls-\d{8}T\d{9}-[0-9a-f]{6}\.jsonl$/;

export class FileAuditTrail implements AuditTrail {
  readonly location: string;
  private readonly path: string;
  private readonly maxBytes: number;
  private readonly keep: number;
  private readonly waitMs: number;
  private queue: Promise<void> = Promise.resolve();
  private folderReady: Promise<unknown> | undefined;

  constructor(dataFolder: string, options: FileTrailOptions = {}) {
    this.location = join(dataFolder, "audit");
    this.path = join(this.location, CURRENT);
    this.maxBytes = options.maxBytes ?? 10 * 1024 * 1024;
    this.keep = options.keep ?? 5;
    this.waitMs = options.waitMs ?? 2_000;
  }

  record(call: AuditCall): Promise<void> {
    let line: string;
    try {
      line = `${JSON.stringify(auditRecord(call))}\n`;
    } catch (error) {
      notWritten(this.location, error);
      return Promise.resolve();
    }
    const write = this.queue.then(() => this.append(line));
    this.queue = write.catch((error: unknown) => notWritten(this.location, error));
    return settleWithin(this.queue, this.waitMs);
  }

  async list(query: AuditQuery = {}): Promise<AuditRecord[]> {
    let names: string[];
    try {
      names = await readdir(this.location);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    const files = [
      ...names.filter((n) => ROTATED.test(n)).sort(),
      ...(names.includes(CURRENT) ? [CURRENT] : []),
    ];
    const found: AuditRecord[] = [];
    for (const name of files) {
      const path = join(this.location, name);
      // A rotated file last written before `since` holds nothing newer.
      if (query.since !== undefined && name !== CURRENT) {
        const info = await stat(path).catch(() => undefined);
        if (info !== undefined && info.mtimeMs < query.since) continue;
      }
      const text = await readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
        // Rotated away or deleted between the listing and now.
        if (error.code === "ENOENT") return "";
        throw error;
      });
      for (const line of text.split("\n")) {
        const record = parseLine(line);
        if (record === undefined) continue;
        if (query.since !== undefined && Date.parse(record.at) < query.since) continue;
        if (query.caller !== undefined && record.caller !== query.caller) continue;
        found.push(record);
      }
    }
    found.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
    return query.limit === undefined ? found : found.slice(Math.max(0, found.length - query.limit));
  }

  async close(): Promise<void> {
    await this.queue;
  }

  private async append(line: string): Promise<void> {
    this.folderReady ??= mkdir(this.location, { recursive: true, mode: 0o700 }).catch(
      (error: unknown) => {
        this.folderReady = undefined;
        throw error;
      },
    );
    await this.folderReady;
    await appendFile(this.path, line, { mode: 0o600 });
    const size = (await stat(this.path).catch(() => undefined))?.size ?? 0;
    if (size >= this.maxBytes) await this.rotate();
  }

  private async rotate(): Promise<void> {
    const stamp = new Date().toISOString().replace(/[-:.Z]/g, "");
    const name = `calls-${stamp}-${randomBytes(3).toString("hex")}.jsonl`;
    try {
      await rename(this.path, join(this.location, name));
    } catch (error) {
      // Another process rotated it first.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    const rotated = (await readdir(this.location)).filter((n) => ROTATED.test(n)).sort();
    for (const old of rotated.slice(0, Math.max(0, rotated.length - this.keep))) {
      await rm(join(this.location, old), { force: true });
    }
  }
}

function parseLine(line: string): AuditRecord | undefined {
  if (line.trim() === "") return undefined;
  try {
    const value = JSON.parse(line) as Partial<AuditRecord>;
    if (
      typeof value.at !== "string" ||
      typeof value.caller !== "string" ||
      typeof value.tool !== "string"
    ) {
      return undefined;
    }
    return { ...value, caller_kind: value.caller_kind ?? kindOfName(value.caller) } as AuditRecord;
  } catch {
    // A line cut short by a crash: the others are still the trail.
    return undefined;
  }
}
