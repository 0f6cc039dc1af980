import { type AbMode, CAMPAIGN_SPECS, type CampaignSpec } from "./campaign-specs.js";
import { CHANNEL_PROFILES } from "./channels.js";
import { hash2, hash3, hex8, Rng } from "./random.js";
import { DAY_MS, HOUR_MS, kstDayNumber, kstDayStart } from "./time.js";
import type { SandboxCampaign, SandboxRound, SandboxTask } from "./types.js";

/**
 * The campaigns of the sandbox, made from the fixed table in campaign-specs.ts; the seed varies
 * dates, audiences, hours and ids. Every round's records are only counted here: rows are
 * generated on demand (records.ts), never stored.
 */

/** Hidden per-campaign knobs the rows generator needs but the World interface does not show. */
export interface CampaignTuning {
  index: number;
  /** Relative conversion uplift of 그룹B over 그룹A, so A/B tests have a visible winner. */
  groupBUplift: number;
  /** Time over which one round's records are created (the send takes a while). */
  sendSpreadMs: number;
}

export interface CampaignSet {
  campaigns: SandboxCampaign[];
  tuning: Map<string, CampaignTuning>;
}

/** Aggregation runs a little after the conversion window closes. */
export const AGGREGATION_DELAY_MS = 2 * HOUR_MS;

export function conversionWindowMs(conversion: SandboxCampaign["conversion"]): number {
  return conversion.window_amount * (conversion.window_unit === "h" ? HOUR_MS : DAY_MS);
}

function roundsFor(ab: AbMode, records: number): SandboxRound[] {
  if (ab === "none") return [{ group: "", records, isControl: false }];
  const control = ab === "ab_control" ? Math.round(records * 0.1) : 0;
  const a = Math.ceil((records - control) / 2);
  const rounds: SandboxRound[] = [
    { group: "그룹A", records: a, isControl: false },
    { group: "그룹B", records: records - control - a, isControl: false },
  ];
  if (control > 0) rounds.push({ group: "대조군", records: control, isControl: true });
  return rounds;
}

/**
 * The world's campaigns. `hugeAbTest`: the huge campaign becomes an A/B test with a control
 * group, its audience a ninth larger so that its rounds keep about the same sends.
 */
export function createCampaigns(seed: number, now: number, hugeAbTest = false): CampaignSet {
  const campaigns: SandboxCampaign[] = [];
  const tuning = new Map<string, CampaignTuning>();
  const today = kstDayNumber(now);
  CAMPAIGN_SPECS.forEach((listed, index) => {
    const spec: CampaignSpec =
      hugeAbTest && listed.role === "huge_sends"
        ? {
            ...listed,
            ab: "ab_control",
            audience: [Math.round(listed.audience[0] / 0.9), Math.round(listed.audience[1] / 0.9)],
          }
        : listed;
    const rng = new Rng(hash2(seed, 0xc000 + index));
    const id = `cmp_${hex8(hash3(seed, 0xc1d, index))}${hex8(hash3(seed, 0xc1e, index)).slice(0, 4)}`;
    const windowMs = conversionWindowMs(spec.conversion);
    // Seed-dependent shift of "long ago" campaigns; recent and role campaigns keep their place.
    const shift = spec.lastDaysAgo >= 20 ? rng.range(-5, 5) : 0;
    const minute = spec.role === "normal" ? rng.pick([0, 0, 10, 30, 45]) : 0;
    const tasks: SandboxTask[] = [];
    for (let k = 0; k < spec.count; k++) {
      const daysAgo = spec.lastDaysAgo + shift + (spec.count - 1 - k) * spec.everyDays;
      let scheduledAt = kstDayStart(today - daysAgo) + spec.hour * HOUR_MS + minute * 60_000;
      if (spec.schedule === "api_trigger") scheduledAt += rng.int(8 * HOUR_MS);
      if (spec.role === "not_ready" && daysAgo === 0) {
        // Today's round must already have gone out: a few hours before now.
        scheduledAt = now - (2 + rng.int(3)) * HOUR_MS;
      }
      if (scheduledAt >= now - HOUR_MS) scheduledAt = now - HOUR_MS - rng.int(HOUR_MS);
      const sentAt = scheduledAt + (spec.schedule === "api_trigger" ? 0 : 30_000 + rng.int(90_000));
      const records = rng.range(spec.audience[0], spec.audience[1]);
      const rounds = roundsFor(spec.ab, records);
      const sent = rounds.reduce((sum, r) => (r.isControl ? sum : sum + r.records), 0);
      tasks.push({
        _id: `tsk_${hex8(hash3(seed, index, k))}${hex8(hash3(seed, k, index)).slice(0, 4)}`,
        campaign_id: id,
        scheduled_at: scheduledAt,
        sent_at: sentAt,
        channel: spec.channel,
        rounds,
        aggregated:
          spec.role !== "not_ready" && scheduledAt + windowMs + AGGREGATION_DELAY_MS <= now,
        cost: { amount: sent * CHANNEL_PROFILES[spec.channel].unitCost, currency: "KRW" },
      });
    }
    tasks.sort((x, y) => x.scheduled_at - y.scheduled_at);
    campaigns.push({
      _id: id,
      name: spec.name,
      tags: [...spec.tags],
      schedule_type: spec.schedule,
      conversion: structuredClone(spec.conversion),
      is_ab_test: spec.ab !== "none",
      channel: spec.channel,
      role: spec.role,
      tasks,
    });
    tuning.set(id, {
      index,
      groupBUplift: 0.8 + rng.next() * 0.6,
      // ~4,000 records per second, at most 20 minutes, and never past now.
      sendSpreadMs: Math.min(20 * 60_000, Math.ceil((spec.audience[1] / 4000) * 1000)),
    });
  });
  return { campaigns, tuning };
}
