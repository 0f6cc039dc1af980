import { writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * Builds campaign export CSVs for the tests with our own writer (not the sandbox's), from a
 * seeded random generator so every run sees the same file.
 */

// Written out from spec 2.5/2.4 rather than imported from src/api/schemas.ts: a wrong constant there
// must not agree with itself in the tests.
export const HEADER = [
  "task_id",
  "scheduled_at",
  "group",
  "event_type",
  "user_id",
  "platform_user_id",
  "captured_at",
  "channel",
  "error_code",
  "error_message",
  "event_properties",
  "custom_event_properties",
  "internal_event_properties",
];

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

export function toCsv(rows: string[][], eol = "\r\n"): string {
  return rows.map((r) => r.map(csvField).join(",")).join(eol) + eol;
}

function time(base: number, offsetSeconds: number): string {
  const d = new Date(base + offsetSeconds * 1000);
  const p = (n: number) => String(n).padStart(2, "0");
  // Written as local wall-clock text, as the service does; UTC fields stand in for local ones.
  return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}`;
}

/** A varied campaign file: two tasks x groups 그룹A/그룹B/대조군, and a non-A/B round. */
export function campaignRows(seed: number, usersPerRound = 60): string[][] {
  const rnd = mulberry32(seed);
  const rows: string[][] = [HEADER];
  const rounds = [
    ["task-1", "2025-03-01 10:00:00", "그룹A"],
    ["task-1", "2025-03-01 10:00:00", "그룹B"],
    ["task-1", "2025-03-01 10:00:00", "대조군"],
    ["task-2", "2025-03-08 10:00:00", ""],
  ] as const;
  const base = Date.UTC(2025, 2, 1, 10, 0, 0);
  const channels = ["app_push", "alimtalk"];
  const messages = [
    'Carrier said: "blocked"\r\nline two',
    "수신 거부\u202E reversed \u200B zero width",
    `very long ${"x".repeat(300)}`,
  ];
  for (const [task, scheduled, group] of rounds) {
    for (let u = 0; u < usersPerRound; u++) {
      const id = `u${u % 45}`; // users repeat across rounds
      const r = rnd();
      // Some rows identify the user only by user_id, some by nothing at all.
      const platformId = r < 0.1 ? "" : `p-${id}`;
      const userId = r < 0.05 ? "" : `c-${id}`;
      const channel = channels[u % 2] as string;
      const sentAt = Math.floor(rnd() * 600);
      const base13 = (type: string, at: number, ch = ""): string[] => [
        task,
        scheduled,
        group,
        type,
        userId,
        platformId,
        time(base, at),
        ch,
        "",
        "",
        "{}",
        "{}",
        "{}",
      ];
      if (group === "대조군") {
        rows.push(base13("control_assigned", sentAt, "control"));
        if (rnd() < 0.2) {
          rows.push(base13("purchase", sentAt + 5000, ""));
        }
        continue;
      }
      rows.push(base13("message_sent", sentAt, channel));
      const outcome = rnd();
      if (outcome < 0.15) {
        const row = base13("message_failed", sentAt + 3, channel);
        const code = outcome < 0.05 ? "E100" : outcome < 0.12 ? "E200" : "";
        row[8] = code;
        row[9] = messages[Math.floor(rnd() * messages.length)] as string;
        rows.push(row);
        continue;
      }
      if (outcome < 0.22) continue; // unsettled
      const receivedAt = sentAt + 2 + Math.floor(rnd() * 30);
      rows.push(base13("message_received", receivedAt, channel));
      const openRoll = rnd();
      if (openRoll < 0.6) {
        const openAt = receivedAt + Math.floor(rnd() * 20000);
        const type = u % 3 === 0 ? "kakao_story_clicked" : "push_opened"; // an unlisted open type
        rows.push(base13(type, openAt));
        if (rnd() < 0.3) rows.push(base13("push_opened", openAt + 100));
        if (rnd() < 0.5) rows.push(base13("landing_clicked", openAt + 10));
        if (rnd() < 0.4) {
          const currency = rnd() < 0.7 ? "KRW" : "USD";
          const amount =
            currency === "KRW"
              ? 1000 * (1 + Math.floor(rnd() * 50))
              : 1.5 * (1 + Math.floor(rnd() * 10));
          const row = base13("purchase", openAt + 600);
          row[10] = JSON.stringify({ revenue: amount, currency, note: 'a,b "c"' });
          rows.push(row);
        }
      }
    }
  }
  return rows;
}

/**
 * A campaign file with a row whose error message holds a line break followed by thousands of
 * lines that read as rows of the campaign's width (more than a range start's check reads, see
 * campaign/chunk-starts.ts): a cut inside it is taken for a record start, wrongly. Offsets in bytes.
 */
export async function fileWithRowsInAMessage(dir: string): Promise<{
  text: Buffer;
  path: string;
  messageAt: number;
  fakeStart: number;
  afterQuoted: number;
}> {
  const rows = campaignRows(11, 30);
  const row = (rows[5] as string[]).join(",");
  const quoted = [...(rows[5] as string[])];
  quoted[9] = `upstream said:\n${Array.from({ length: 4000 }, () => row).join("\n")}\ntry later`;
  const parts = [
    toCsv(rows.slice(0, 20), "\n"),
    toCsv([quoted], "\n"),
    toCsv(rows.slice(20), "\n"),
  ];
  const text = Buffer.from(parts.join(""));
  const path = join(dir, "rows-in-a-message.csv");
  await writeFile(path, text);
  const messageAt = text.indexOf("upstream said:");
  return {
    text,
    path,
    messageAt,
    fakeStart: messageAt + "upstream said:\n".length,
    afterQuoted: Buffer.byteLength(parts[0] as string) + Buffer.byteLength(parts[1] as string),
  };
}

/** One row of the campaign CSV's 13 columns: the round, the event, the user, when and how. */
export function eventRow(row: {
  task: string;
  scheduled: string;
  group: string;
  event: string;
  userId?: string;
  platformUserId?: string;
  at: string;
  channel?: string;
  errorCode?: string;
  errorMessage?: string;
}): string[] {
  return [
    row.task,
    row.scheduled,
    row.group,
    row.event,
    row.userId ?? "",
    row.platformUserId ?? "",
    row.at,
    row.channel ?? "app_push",
    row.errorCode ?? "",
    row.errorMessage ?? "",
    "{}",
    "{}",
    "{}",
  ];
}
