import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { keptOn, planCampaign } from "./campaign-plan.js";
import { writeCampaignPartitions } from "./campaign-write.js";
import type { ExportRecord, HistoryCatalogue } from "./catalogue.js";
import { commitPlanned, type StagedPartition } from "./commit.js";
import type { HistoryContext } from "./context.js";
import { newStagingFolder } from "./layout.js";
import { planScenarioPrune, writeScenarioPartitions } from "./scenario-write.js";
import { openWorkEngine, type WorkEngine } from "./work-engine.js";

/**
 * CRM_HISTORY_DAYS: rounds (and scenario days) dated before the cutoff leave the history. Every
 * commit applies it to what it touches and to the rest (an ingestion prunes on its way); this
 * runs it alone, for a history nothing was added to for a while (the server's start, `sync`).
 * Removing a downloaded CSV (CRM_RETENTION_*) never removes history: only this does.
 */
export interface PruneResult {
  partitions_rewritten: number;
  partitions_dropped: number;
  rounds_removed: number;
}

export async function pruneHistory(context: HistoryContext): Promise<PruneResult> {
  for (let attempt = 0; attempt < 8; attempt++) {
    const base = await context.store.read();
    const cutoff = context.cutoff();
    const actions = planCampaign(base, undefined, cutoff);
    const scenario = planScenarioPrune(base, cutoff);
    const trimmed = trimmedExports(base, cutoff);
    if (actions.length === 0 && scenario.length === 0 && trimmed.length === 0) {
      return { partitions_rewritten: 0, partitions_dropped: 0, rounds_removed: 0 };
    }
    const staging = newStagingFolder(context.folder);
    await mkdir(staging, { recursive: true });
    let engine: WorkEngine | undefined;
    try {
      engine = await openWorkEngine(context.work, join(staging, "spill"));
      const days = await writeScenarioPartitions(engine, context.folder, staging, scenario);
      const write: StagedPartition[] = [
        ...(await writeCampaignPartitions(engine, context.folder, staging, actions)),
        ...days.write,
      ];
      const drop = [...actions.filter((a) => a.kind === "drop").map((a) => a.dir), ...days.drop];
      const committed = await commitPlanned(context, { base, write, drop, putExports: trimmed });
      if (committed !== undefined) {
        const before = base.partitions.reduce(
          (n, p) => n + (p.dataset === "events" ? p.rounds.length : 0),
          0,
        );
        const after = committed.partitions.reduce(
          (n, p) => n + (p.dataset === "events" ? p.rounds.length : 0),
          0,
        );
        return {
          partitions_rewritten: write.length,
          partitions_dropped: drop.length,
          rounds_removed: before - after,
        };
      }
    } finally {
      engine?.close();
      await rm(staging, { recursive: true, force: true });
    }
  }
  return { partitions_rewritten: 0, partitions_dropped: 0, rounds_removed: 0 };
}

/**
 * The campaign export records with rounds before the cutoff, those rounds taken out: the record
 * of an export stays (it was added once; adding it again would change nothing), its list stays
 * within the kept days.
 */
export function trimmedExports(catalogue: HistoryCatalogue, cutoff: string): ExportRecord[] {
  const out: ExportRecord[] = [];
  for (const record of catalogue.exports) {
    if (record.kind !== "campaign_event_data") continue;
    const rounds = record.rounds.filter((r) => keptOn(r, cutoff));
    if (rounds.length !== record.rounds.length) out.push({ ...record, rounds });
  }
  return out;
}
