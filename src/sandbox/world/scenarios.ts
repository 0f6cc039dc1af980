import type { MetricColumn } from "../spec.js";
import { CHANNEL_PROFILES } from "./channels.js";
import { hash2, hash3, hashString, hex8, Rng } from "./random.js";
import { dateToDay, dayToDate, kstDayNumber } from "./time.js";
import type {
  Channel,
  SandboxScenario,
  ScenarioDay,
  ScenarioMetrics,
  ScenarioNode,
  ScenarioNodeReport,
} from "./types.js";

/**
 * Scenarios (automated journeys) and their daily metrics (spec 2.5). Daily values are drawn per
 * (node, day) from the seed, so any period can be reported without storing anything.
 *
 * 명 (distinct users): a sandbox user passes each message node of a scenario on one day only,
 * so a node's distinct users over a period equal the sum of its daily distinct users, and the
 * summary sheet's every count column equals the sum of the daily sheet. Within a day 건 >= 명
 * (a user can re-enter the scenario the same day).
 */

interface NodeSpec {
  channel: Channel;
  branch: string;
  /** Typical receipts per day; 0 = a node that sent nothing (e.g. paused). */
  volume: number;
}

interface ScenarioSpec {
  name: string;
  /** Days before today the scenario went live. */
  startDaysAgo: number;
  /** Share of days without any send. */
  idleDays: number;
  nodes: NodeSpec[];
}

const SPECS: readonly ScenarioSpec[] = [
  {
    name: "신규 가입 웰컴 여정",
    startDaysAgo: 180,
    idleDays: 0.05,
    nodes: [
      { channel: "alimtalk", branch: "", volume: 120 },
      { channel: "app_push", branch: "A", volume: 55 },
      { channel: "sms", branch: "B", volume: 55 },
      { channel: "email", branch: "", volume: 95 },
    ],
  },
  {
    name: "장바구니 이탈 리마인드 여정",
    startDaysAgo: 120,
    idleDays: 0.1,
    nodes: [
      { channel: "app_push", branch: "", volume: 300 },
      { channel: "alimtalk", branch: "A", volume: 140 },
      { channel: "friendtalk", branch: "B·A", volume: 70 },
      { channel: "rcs", branch: "B·B", volume: 65 },
      { channel: "brand_message", branch: "", volume: 180 },
    ],
  },
  {
    name: "휴면 고객 재활성화 여정",
    startDaysAgo: 90,
    idleDays: 0.3,
    nodes: [
      { channel: "email", branch: "", volume: 80 },
      { channel: "sms", branch: "", volume: 40 },
      { channel: "app_push", branch: "", volume: 0 },
    ],
  },
  {
    name: "VIP 등급 상승 축하",
    startDaysAgo: 45,
    idleDays: 0.4,
    nodes: [
      { channel: "alimtalk", branch: "", volume: 15 },
      { channel: "brand_message", branch: "A", volume: 8 },
      { channel: "email", branch: "B", volume: 7 },
    ],
  },
];

interface NodeModel {
  node: ScenarioNode;
  channel: Channel;
  volume: number;
  hash: number;
}

interface ScenarioModel {
  scenario: SandboxScenario;
  startDay: number;
  idleDays: number;
  nodes: NodeModel[];
}

export interface ScenarioSet {
  scenarios: SandboxScenario[];
  report(scenario: SandboxScenario, fromDate: string, toDate: string): ScenarioNodeReport[];
}

const AVERAGE_ORDER_KRW = 48_000;

export function createScenarios(seed: number, now: number): ScenarioSet {
  const today = kstDayNumber(now);
  const models = new Map<string, ScenarioModel>();
  const scenarios = SPECS.map((spec, index) => {
    const id = `scn_${hex8(hash3(seed, 0x5c0, index))}${hex8(hash3(seed, 0x5c1, index)).slice(0, 4)}`;
    const nodes: NodeModel[] = spec.nodes.map((nodeSpec, n) => {
      const nodeId = `node_${hex8(hash3(seed, hashString(id), n))}`;
      return {
        node: {
          number: n + 1,
          channel: CHANNEL_PROFILES[nodeSpec.channel].label,
          branch: nodeSpec.branch,
          node_id: nodeId,
        },
        channel: nodeSpec.channel,
        volume: nodeSpec.volume,
        hash: hash2(seed, hashString(nodeId)),
      };
    });
    const scenario: SandboxScenario = { _id: id, name: spec.name, nodes: nodes.map((m) => m.node) };
    models.set(id, {
      scenario,
      startDay: today - spec.startDaysAgo,
      idleDays: spec.idleDays,
      nodes,
    });
    return scenario;
  });

  function report(
    scenario: SandboxScenario,
    fromDate: string,
    toDate: string,
  ): ScenarioNodeReport[] {
    const model = models.get(scenario._id);
    if (model === undefined) throw new RangeError(`unknown scenario ${scenario._id}`);
    const fromDay = dateToDay(fromDate);
    const toDay = dateToDay(toDate);
    if (fromDay === undefined || toDay === undefined) {
      throw new RangeError(`dates must be YYYY-MM-DD: ${fromDate}, ${toDate}`);
    }
    // Only finished days are reported: the scenario's first day up to yesterday.
    const first = Math.max(fromDay, model.startDay);
    const last = Math.min(toDay, today - 1);
    return model.nodes.map((nodeModel) => {
      const days: ScenarioDay[] = [];
      for (let day = first; day <= last; day++) {
        const metrics = dailyMetrics(nodeModel, model.idleDays, day);
        if (metrics !== undefined) days.push({ date: dayToDate(day), metrics });
      }
      return { node: nodeModel.node, summary: summarize(days), days };
    });
  }

  return { scenarios, report };
}

function dailyMetrics(
  model: NodeModel,
  idleDays: number,
  day: number,
): ScenarioMetrics | undefined {
  if (model.volume === 0) return undefined;
  const rng = new Rng(hash2(model.hash, day));
  if (rng.chance(idleDays)) return undefined;
  const profile = CHANNEL_PROFILES[model.channel];
  // 1970-01-01 was a Thursday: (day + 4) % 7 gives 0 for Sunday. Weekends are quieter.
  const weekday = (day + 4) % 7;
  const weekFactor = weekday === 0 || weekday === 6 ? 0.7 : 1;
  const sends = Math.max(1, Math.round(model.volume * weekFactor * (0.6 + 0.8 * rng.next())));
  const sendUsers = Math.max(1, sends - Math.floor(sends * 0.04 * rng.next()));
  const opens = Math.round(sends * profile.openRate * 1.6 * (0.6 + 0.8 * rng.next()));
  const openUsers = Math.min(
    sendUsers,
    opens,
    Math.max(opens > 0 ? 1 : 0, Math.round(opens * (0.75 + 0.2 * rng.next()))),
  );
  const conversions = Math.round(openUsers * 0.18 * (0.4 + 1.2 * rng.next()));
  const conversionUsers = Math.min(
    openUsers,
    Math.max(conversions > 0 ? 1 : 0, conversions - Math.floor(conversions * 0.15 * rng.next())),
  );
  let revenue = 0;
  for (let c = 0; c < conversions; c++) {
    revenue += Math.round((AVERAGE_ORDER_KRW * (0.3 + 1.4 * rng.next())) / 100) * 100;
  }
  // Cost is charged per attempt, failed ones included.
  const attempts = sends + Math.round((sends * profile.failRate) / (1 - profile.failRate));
  return withRatios({
    sends,
    sendUsers,
    opens,
    openUsers,
    conversions,
    conversionUsers,
    revenue,
    cost: attempts * profile.unitCost,
  });
}

interface Counts {
  sends: number;
  sendUsers: number;
  opens: number;
  openUsers: number;
  conversions: number;
  conversionUsers: number;
  revenue: number;
  cost: number;
}

function div(numerator: number, denominator: number): number {
  return denominator === 0 ? 0 : numerator / denominator;
}

function withRatios(c: Counts): ScenarioMetrics {
  return {
    "발송 수(건)": c.sends,
    "발송 수(명)": c.sendUsers,
    "오픈 수(건)": c.opens,
    "오픈 수(명)": c.openUsers,
    "오픈율(건)": div(c.opens, c.sends),
    "오픈율(명)": div(c.openUsers, c.sendUsers),
    "전환 수(건)": c.conversions,
    "전환 수(명)": c.conversionUsers,
    "전환율(건)": div(c.conversions, c.opens),
    "전환율(명)": div(c.conversionUsers, c.openUsers),
    "전환 수익": c.revenue,
    "집행 비용": c.cost,
    ROAS: div(c.revenue, c.cost),
    객단가: div(c.revenue, c.conversions),
    CAC: div(c.cost, c.conversions),
  };
}

/** Counts summed over the days; ratios recomputed from the sums, never averaged. */
function summarize(days: readonly ScenarioDay[]): ScenarioMetrics {
  const sum = (column: MetricColumn): number =>
    days.reduce((total, day) => total + day.metrics[column], 0);
  return withRatios({
    sends: sum("발송 수(건)"),
    sendUsers: sum("발송 수(명)"),
    opens: sum("오픈 수(건)"),
    openUsers: sum("오픈 수(명)"),
    conversions: sum("전환 수(건)"),
    conversionUsers: sum("전환 수(명)"),
    revenue: sum("전환 수익"),
    cost: sum("집행 비용"),
  });
}
