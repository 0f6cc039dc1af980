import { createWriteStream } from "node:fs";

/**
 * A campaign export written without the sandbox (app push, 10 rounds x 100,000 sends, receipts,
 * opens, conversions, 3% failures with a quoted message), from a fixed seed. `multiLineMessages`
 * puts a line break inside each failure's quoted message, as real error texts may hold.
 */
export async function writeGeneratedCampaign(target, { multiLineMessages = false } = {}) {
  const failureMessage = multiLineMessages
    ? '"invalid token, ""unregistered""\nsecond line"'
    : '"invalid token, ""unregistered"""';
  const out = createWriteStream(target, { highWaterMark: 1 << 20 });
  const write = (s) => (out.write(s) ? null : new Promise((r) => out.once("drain", r)));
  await write(
    "task_id,scheduled_at,group,event_type,user_id,platform_user_id,captured_at,channel,error_code,error_message,event_properties,custom_event_properties,internal_event_properties\n",
  );
  let seed = 1;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const p = (n) => String(n).padStart(2, "0");
  let buf = "";
  for (let round = 0; round < 10; round++) {
    const task = `task_huge_${round}`;
    const day = `2025-06-${p(round + 1)}`;
    const sched = `${day} 12:00:00`;
    for (let u = 0; u < 100_000; u++) {
      const id = String(u * 7 + round).padStart(6, "0");
      const t = `${day} 12:${p(Math.floor(u / 4000) % 60)}:${p(u % 60)}`;
      const base = `${task},${sched},,`;
      const who = `u_${id},pu_${id}`;
      buf += `${base}message_sent,${who},${t},app_push,,,{},{},{}\n`;
      const r = rnd();
      if (r < 0.03) {
        buf += `${base}message_failed,${who},${t},app_push,E_TOKEN,${failureMessage},{},{},{}\n`;
      } else if (r > 0.015 + 0.03) {
        buf += `${base}message_received,${who},${t},app_push,,,{},{},{}\n`;
        if (rnd() < 0.12) {
          const h = p(12 + Math.floor(rnd() * 10));
          buf += `${base}push_opened,${who},${day} ${h}:10:00,,,,"{""platform"":""ios""}",,\n`;
          if (rnd() < 0.1) {
            buf += `${base}purchase,${who},${day} ${h}:30:00,,,,"{""revenue"":25000,""currency"":""KRW"",""item_id"":""p_001""}",,\n`;
          }
        }
      }
      if (buf.length > 1 << 20) {
        await write(buf);
        buf = "";
      }
    }
  }
  await write(buf);
  await new Promise((resolve, reject) => out.end((error) => (error ? reject(error) : resolve())));
}
