import type { MetricsResponse, MetricsTask, ScheduleType } from "../spec.js";
import { createBehaviour } from "./behaviour.js";
import { conversionWindowMs, createCampaigns } from "./campaigns.js";
import { createCatalog } from "./catalog.js";
import { CHANNEL_PROFILES } from "./channels.js";
import { TaskCounter } from "./metrics.js";
import { Recommender, SLOTS } from "./recommend.js";
import { makePlan, type RoundPlan } from "./records.js";
import { roundRowsOf } from "./rows.js";
import { createScenarios } from "./scenarios.js";
import { TIME_ZONE } from "./time.js";
import type {
  CampaignRow,
  SandboxCampaign,
  SandboxRound,
  SandboxTask,
  World,
  WorldOptions,
} from "./types.js";
import { platformUserIdOf } from "./users.js";

export { formatKstDate } from "./time.js";
export type * from "./types.js";

export const APPLICATION_ID = "sandbox-app";

/**
 * Builds the sandbox's synthetic world, deterministic from (seed, now). Campaign rows are never
 * stored: `roundRows` regenerates them on demand and `taskMetrics` counts the same simulation.
 */
export function createWorld(options: WorldOptions): World {
  const seed = options.seed | 0;
  const now = options.now;
  const products = createCatalog(seed);
  const { campaigns, tuning } = createCampaigns(seed, now, options.hugeAbTest === true);
  const scenarioSet = createScenarios(seed, now);
  const behaviour = createBehaviour(seed, now, products);
  const recommender = new Recommender(products, behaviour, now);
  const campaignById = new Map(campaigns.map((c) => [c._id, c]));
  const scenarioById = new Map(scenarioSet.scenarios.map((s) => [s._id, s]));
  const planCache = new Map<string, RoundPlan>();
  const metricsCache = new Map<string, MetricsTask>();

  function campaignOf(task: SandboxTask): SandboxCampaign {
    const campaign = campaignById.get(task.campaign_id);
    if (campaign === undefined) throw new RangeError(`unknown campaign ${task.campaign_id}`);
    return campaign;
  }

  function planOf(task: SandboxTask, round: SandboxRound): RoundPlan {
    const key = `${task._id}\u0000${round.group}`;
    const cached = planCache.get(key);
    if (cached !== undefined) return cached;
    const campaign = campaignOf(task);
    const campaignTuning = tuning.get(campaign._id);
    let firstRecord = 0;
    for (const other of task.rounds) {
      if (other.group === round.group) break;
      firstRecord += other.records;
    }
    const plan = makePlan({
      seed,
      now,
      campaignId: campaign._id,
      taskId: task._id,
      scheduledAt: task.scheduled_at,
      sentAt: task.sent_at,
      channel: task.channel,
      windowMs: conversionWindowMs(campaign.conversion),
      group: round.group,
      isControl: round.isControl,
      records: round.records,
      firstRecord,
      groupUplift: campaignTuning?.groupBUplift ?? 1,
      sendSpreadMs: campaignTuning?.sendSpreadMs ?? 60_000,
    });
    planCache.set(key, plan);
    return plan;
  }

  function roundRows(task: SandboxTask, round: SandboxRound): Iterable<CampaignRow> {
    const campaign = campaignOf(task);
    const plan = planOf(task, round);
    return {
      [Symbol.iterator]: () =>
        roundRowsOf({
          plan,
          campaignId: campaign._id,
          channel: task.channel,
          conversionEvent: campaign.conversion.event_type,
          products,
          seed,
        }),
    };
  }

  function taskMetrics(task: SandboxTask): MetricsTask {
    const cached = metricsCache.get(task._id);
    if (cached !== undefined) return cached;
    const counter = new TaskCounter(CHANNEL_PROFILES[task.channel].clickTargets);
    for (const round of task.rounds) counter.addRound(planOf(task, round), products);
    const metrics = counter.toMetricsTask(task);
    metricsCache.set(task._id, metrics);
    return metrics;
  }

  function campaignMetrics(from: number, to: number, scheduleType?: ScheduleType): MetricsResponse {
    const result: MetricsResponse = { campaigns: [] };
    for (const campaign of campaigns) {
      if (scheduleType !== undefined && campaign.schedule_type !== scheduleType) continue;
      const tasks = campaign.tasks.filter((t) => from <= t.scheduled_at && t.scheduled_at < to);
      if (tasks.length === 0) continue;
      result.campaigns.push({
        _id: campaign._id,
        name: campaign.name,
        tags: [...campaign.tags],
        schedule_type: campaign.schedule_type,
        conversion: structuredClone(campaign.conversion),
        is_ab_test: campaign.is_ab_test,
        // Copies: callers may shape the response without touching the cache.
        tasks: tasks.map((task) => structuredClone(taskMetrics(task))),
      });
    }
    return result;
  }

  return {
    applicationId: APPLICATION_ID,
    timeZone: TIME_ZONE,
    now,
    products,
    campaigns,
    scenarios: scenarioSet.scenarios,
    slots: SLOTS,
    sampleUserIds: Array.from({ length: 20 }, (_, i) => platformUserIdOf(i * 37)),
    campaign: (id) => campaignById.get(id),
    scenario: (id) => scenarioById.get(id),
    roundRows,
    taskMetrics,
    campaignMetrics,
    scenarioReport: (scenario, fromDate, toDate) => scenarioSet.report(scenario, fromDate, toDate),
    recommend: (slotKey, request, sinceStartMs) =>
      recommender.recommend(slotKey, request, sinceStartMs),
  };
}
