import { rename } from "node:fs/promises";
import { join } from "node:path";
import { exists } from "./measure.mjs";

/**
 * The largest campaign export one job may hold, as the history and first-question benchmarks
 * use it: the sandbox's huge campaign (seed 42, its clock at `now`), its first aggregated rounds
 * holding at most `sends` sends, rows interleaved by time, 24-hex service IDs and e-mail
 * customer IDs (the shapes bench's "max job"). Written by the build in `dist` into `dir`, once:
 * a file already there is used as it is.
 */
export async function largeExport(dist, dir, sends, now) {
  const shape = { order: "time", platformIds: "hex24", customerIds: "email" };
  const path = join(dir, `campaign-s42-${sends}-time-hex24-email.csv`);
  if (await exists(path)) return path;
  const { createWorld } = await import(join(dist, "sandbox", "world", "index.js"));
  const { writeCampaignCsv } = await import(join(dist, "sandbox", "csv-writer.js"));
  const world = createWorld({ seed: 42, now, hugeAbTest: true });
  const huge = world.campaigns.find((c) => c.role === "huge_sends");
  const picked = [];
  let total = 0;
  for (const task of huge.tasks.filter((t) => t.aggregated)) {
    const add = task.rounds.reduce((n, r) => (r.isControl ? n : n + r.records), 0);
    if (total + add > sends) break;
    total += add;
    for (const round of task.rounds) picked.push({ task, round });
  }
  if (picked.length === 0) throw new Error(`BENCH_SENDS=${sends} is below one task's sends.`);
  await writeCampaignCsv(world, picked, `${path}.part`, 540, undefined, shape);
  await rename(`${path}.part`, path);
  return path;
}
