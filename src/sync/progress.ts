import type { WindowCampaign } from "./campaigns.js";

/** One export of a run: a campaign's inclusive days. */
export interface ExportItem {
  campaign: WindowCampaign;
  from: string;
  to: string;
  /** Rounds of it the history lacks. */
  missing: number;
}

/** What a run tells the person watching it, on stderr. */
export interface SyncProgress {
  /** `count` more exports are planned (a split adds one); `campaigns` once, at the start. */
  planned(count: number, campaigns: number | undefined): void;
  /** Where one export stands; `fraction` of its download, when known. */
  step(item: ExportItem, state: string, fraction?: number): void;
  /** The export ended (added, not ready, split or failed): one line. */
  done(item: ExportItem, line: string): void;
  /** Something about the whole run (a wait for the budget, a campaign without rounds). */
  note(text: string): void;
  close(): void;
}

export function itemLabel(item: ExportItem): string {
  const days = item.from === item.to ? item.from : `${item.from}..${item.to}`;
  return `${item.campaign.id} ${days}`;
}

/** Not a terminal (a log, cron's mail): one line per export and per note, nothing redrawn. */
export function lineProgress(write: (text: string) => void): SyncProgress {
  let total = 0;
  let finished = 0;
  return {
    planned(count, campaigns) {
      total += count;
      if (campaigns !== undefined) {
        write(plannedLine(count, campaigns));
      }
    },
    step() {},
    done(item, line) {
      finished += 1;
      write(`sync: [${finished}/${total}] ${itemLabel(item)}: ${line}\n`);
    },
    note(text) {
      write(`sync: ${text}\n`);
    },
    close() {},
  };
}

const BAR_WIDTH = 24;
const REDRAW_MS = 100;

/**
 * A terminal: a bar per export under way and one for the whole run, redrawn in place; finished
 * exports and notes are printed above the bars and stay.
 */
export function barProgress(
  write: (text: string) => void,
  columns: () => number,
  clock: () => number = Date.now,
): SyncProgress {
  const active = new Map<
    ExportItem,
    { state: string; fraction: number | undefined; since: number }
  >();
  let total = 0;
  let finished = 0;
  let drawn = 0;
  let timer: NodeJS.Timeout | undefined;
  const lines = (): string[] => {
    const width = Math.max(40, columns());
    const out = [...active].map(([item, s]) => {
      const seconds = Math.round((clock() - s.since) / 1000);
      return clip(`${bar(s.fraction)} ${itemLabel(item)}  ${s.state} (${seconds}s)`, width);
    });
    out.push(
      clip(
        `${bar(total === 0 ? 1 : finished / total)} sync: ${finished} of ${total} export(s) done`,
        width,
      ),
    );
    return out;
  };
  const clear = () => {
    if (drawn > 0) write(`\x1b[${drawn}F\x1b[J`);
    drawn = 0;
  };
  const draw = () => {
    timer = undefined;
    clear();
    const text = lines();
    write(`${text.join("\n")}\n`);
    drawn = text.length;
  };
  const later = () => {
    timer ??= setTimeout(draw, REDRAW_MS);
  };
  const above = (text: string) => {
    clear();
    write(text);
    draw();
  };
  return {
    planned(count, campaigns) {
      total += count;
      if (campaigns !== undefined) {
        above(plannedLine(count, campaigns));
      } else later();
    },
    step(item, state, fraction) {
      const current = active.get(item);
      active.set(item, { state, fraction, since: current?.since ?? clock() });
      later();
    },
    done(item, line) {
      active.delete(item);
      finished += 1;
      above(`sync: ${itemLabel(item)}: ${line}\n`);
    },
    note(text) {
      above(`sync: ${text}\n`);
    },
    close() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      active.clear();
      draw();
    },
  };
}

/** `[#########---------------]`, or dots when the share is unknown. */
function bar(fraction: number | undefined): string {
  if (fraction === undefined) return `[${"·".repeat(BAR_WIDTH)}]`;
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * BAR_WIDTH);
  return `[${"#".repeat(filled)}${"-".repeat(BAR_WIDTH - filled)}]`;
}

function clip(line: string, width: number): string {
  return line.length <= width - 1 ? line : `${line.slice(0, width - 2)}…`;
}

/** The line that opens a run: how many campaigns and exports it found. */
function plannedLine(count: number, campaigns: number): string {
  return `sync: ${campaigns} campaign(s) with rounds in the window; ${count} export(s) to make or reuse\n`;
}
