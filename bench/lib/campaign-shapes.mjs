/**
 * Campaign export CSVs of shapes the sandbox does not write, for the benchmarks: the same rows in
 * three orders (round by round as the sandbox writes them; by event phase within a round, so the
 * A/B groups and the control group interleave row by row; and across the whole file, so rounds
 * interleave too), with user IDs of several shapes. Streamed to disk with a fixed seed: every
 * decision is a hash of (round, user, salt), so each order holds exactly the same rows.
 */
import { open } from "node:fs/promises";

const HEADER =
  "task_id,scheduled_at,group,event_type,user_id,platform_user_id,captured_at,channel,error_code,error_message,event_properties,custom_event_properties,internal_event_properties\r\n";
const GROUPS = ["그룹A", "그룹B", "대조군"];

/** A deterministic value in [0, 1) for (a, b, salt). */
function chance(a, b, salt) {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + salt * 0x27d4eb2f, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

const p2 = (n) => String(n).padStart(2, "0");
function hex24(n, salt) {
  let out = "";
  for (let k = 0; k < 3; k++) {
    out += (Math.floor(chance(n, k, salt) * 0xffffffff) >>> 0).toString(16).padStart(8, "0");
  }
  return out;
}

/** The user columns (user_id, platform_user_id) for user `u`. */
function userColumns(ids, u) {
  switch (ids) {
    case "sandbox":
      return `c_${String(u).padStart(7, "0")},pu_${String(u).padStart(7, "0")}`;
    case "hex24":
      return `cust${u}@example.co.kr,${hex24(u, 7)}`;
    case "empty-customer":
      return `,${hex24(u, 7)}`;
    default:
      throw new Error(`unknown id shape ${ids}`);
  }
}

/**
 * Writes `sends` sends over `rounds` rounds (each split into 그룹A, 그룹B and a 10% control group)
 * to `path` in `order` ("rounds" | "time-in-round" | "time"), user IDs shaped as `ids`.
 */
export async function writeCampaignShape(path, { sends, rounds = 10, order, ids }) {
  const perRound = Math.ceil(sends / rounds);
  // A user pool a little larger than a round, so rounds share most users (as a campaign does).
  const pool = Math.ceil(perRound * 1.3);
  const handle = await open(path, "w");
  let buf = "";
  let bytes = 0;
  const flush = async (force) => {
    if (buf.length < 1 << 20 && !force) return;
    const data = Buffer.from(buf, "utf8");
    bytes += data.length;
    buf = "";
    await handle.write(data);
  };
  const infos = Array.from({ length: rounds }, (_, r) => {
    const day = `2025-06-${p2(r + 1)}`;
    return { task: `67a${hex24(r, 3).slice(0, 21)}`, day, sched: `${day} 09:00:00` };
  });
  const roundInfo = (r) => infos[r];
  const users = Array.from({ length: pool }, (_, u) => userColumns(ids, u));
  const userOf = (r, k) => Math.floor(chance(r, k, 1) * pool);
  const groupOf = (r, k) => {
    const c = chance(r, k, 2);
    return c < 0.1 ? 2 : c < 0.55 ? 0 : 1;
  };
  const two = Array.from({ length: 60 }, (_, n) => p2(n));
  const at = (day, seconds) => {
    const s = Math.min(seconds, 86399);
    return `${day} ${two[Math.floor(s / 3600)]}:${two[Math.floor(s / 60) % 60]}:${two[s % 60]}`;
  };
  /** The rows of phase `phase` (0 send, 1 outcome, 2 open, 3 conversion) for send k of round r. */
  const rowsOf = (r, k, phase) => {
    const { task, day, sched } = roundInfo(r);
    const g = groupOf(r, k);
    const base = `${task},${sched},${GROUPS[g]},`;
    const who = users[userOf(r, k)];
    const t0 = 9 * 3600 + Math.floor(k / 50);
    if (g === 2) {
      if (phase === 0) return `${base}control_assigned,${who},${at(day, t0)},,,,{},{},{}\r\n`;
      if (phase === 3 && chance(r, k, 9) < 0.01) {
        return `${base}purchase,${who},${at(day, t0 + 7200)},,,,"{""revenue"":19000,""currency"":""KRW""}",{},{}\r\n`;
      }
      return "";
    }
    const outcome = chance(r, k, 3);
    const opened = outcome >= 0.045 && chance(r, k, 4) < 0.12;
    switch (phase) {
      case 0:
        return `${base}message_sent,${who},${at(day, t0)},app_push,,,{},{},{}\r\n`;
      case 1:
        if (outcome < 0.03) {
          return `${base}message_failed,${who},${at(day, t0 + 2)},app_push,E_TOKEN,"invalid token, ""unregistered""",{},{},{}\r\n`;
        }
        if (outcome < 0.045) return ""; // unsettled
        return `${base}message_received,${who},${at(day, t0 + 3)},app_push,,,{},{},{}\r\n`;
      case 2:
        if (!opened) return "";
        return `${base}push_opened,${who},${at(day, t0 + 600 + Math.floor(chance(r, k, 5) * 30000))},,,,"{""platform"":""ios""}",{},{}\r\n`;
      default:
        if (!opened || chance(r, k, 6) >= 0.1) return "";
        return `${base}purchase,${who},${at(day, t0 + 40000)},,,,"{""revenue"":25000,""currency"":""KRW"",""item_id"":""p_001""}",{},{}\r\n`;
    }
  };
  try {
    buf += HEADER;
    if (order === "rounds") {
      // Round by round, group by group, each send's rows together (as the sandbox writes).
      for (let r = 0; r < rounds; r++) {
        for (let g = 0; g < 3; g++) {
          for (let k = 0; k < perRound; k++) {
            if (groupOf(r, k) !== g) continue;
            for (let phase = 0; phase < 4; phase++) buf += rowsOf(r, k, phase);
            await flush(false);
          }
        }
      }
    } else if (order === "time-in-round") {
      // Within a round by phase (sends, then outcomes, opens, conversions): groups interleave.
      for (let r = 0; r < rounds; r++) {
        for (let phase = 0; phase < 4; phase++) {
          for (let k = 0; k < perRound; k++) {
            buf += rowsOf(r, k, phase);
            await flush(false);
          }
        }
      }
    } else if (order === "time") {
      // Across the whole file: phase by phase, send by send, round by round.
      for (let phase = 0; phase < 4; phase++) {
        for (let k = 0; k < perRound; k++) {
          for (let r = 0; r < rounds; r++) buf += rowsOf(r, k, phase);
          await flush(false);
        }
      }
    } else {
      throw new Error(`unknown order ${order}`);
    }
    await flush(true);
  } finally {
    await handle.close();
  }
  return bytes;
}
