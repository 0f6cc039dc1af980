import type { MetricsTask } from "../spec.js";
import {
  isKrw,
  K_CONVERSION,
  K_LANDING,
  K_OPEN,
  K_RECEIVED,
  K_SENT,
  RecordSim,
  type RoundPlan,
} from "./records.js";
import { isoUtc } from "./time.js";
import type { Product, SandboxTask } from "./types.js";

/**
 * The metrics-endpoint task object (spec 2.6), counted from the very records the CSV rows come
 * from, so every count with a row type equals that row type's count in the export.
 *
 * Formulas (the spec does not show them; these are the sandbox's choices):
 * - sent_count: `message_sent` rows (send groups, all rounds of the task); received_count:
 *   `message_received` rows; open_count: rows of the channel's open-type event (repeats counted);
 *   click_count: `landing_clicked` rows; click_target_counts: landing clicks per `click_target`.
 * - purchase_count: every conversion row of the task, control group included (= the export's
 *   conversion rows for the task). purchase_count_by_received / _by_open: conversions of send
 *   records that were received / opened before converting (in the sandbox every send-group
 *   conversion follows an open, so both equal the send-group conversions); _by_click:
 *   conversions that follow a landing click of the same record.
 * - revenue: sum of KRW payments of the purchase_count conversions; payments in other currencies
 *   are left out (money is never converted): a task has one revenue_currency (spec 2.6) and only
 *   KRW payments are added, the rule spec 2.5 states for 전환 수익. revenue_currency is "KRW";
 *   revenue_by_* likewise. The tools state this difference from the CSV (src/exports/metrics-vs-export.ts).
 * - *_user_count: distinct users among the rows of that kind, a user being its platform_user_id,
 *   or its user_id where platform_user_id is empty (a record with no linked user), as the
 *   contract's export summaries count them. Users of one task are all distinct (A/B groups get
 *   disjoint users), so these count records with such a row.
 * - cost: the task's sending cost (unit price of the channel x send records), KRW.
 * - open_rate = open_count / received_count; conversion_rate = purchase_count_by_open /
 *   open_count; roas = revenue / cost; 0 when the denominator is 0.
 */

export class TaskCounter {
  sent = 0;
  received = 0;
  opens = 0;
  clicks = 0;
  purchases = 0;
  purchasesByClick = 0;
  purchasesByOpen = 0;
  purchasesByReceived = 0;
  revenue = 0;
  revenueByClick = 0;
  revenueByOpen = 0;
  revenueByReceived = 0;
  sentUsers = 0;
  receivedUsers = 0;
  openUsers = 0;
  clickUsers = 0;
  purchaseUsersByClick = 0;
  purchaseUsersByOpen = 0;
  purchaseUsersByReceived = 0;
  readonly targetCounts: number[];
  readonly targetUsers: number[];

  constructor(readonly clickTargets: readonly string[]) {
    this.targetCounts = clickTargets.map(() => 0);
    this.targetUsers = clickTargets.map(() => 0);
  }

  addRound(plan: RoundPlan, products: readonly Product[]): void {
    const sim = new RecordSim(products);
    const targetCounts = this.targetCounts;
    const targetUsers = this.targetUsers;
    for (let i = 0; i < plan.records; i++) {
      sim.run(plan, i);
      let received = false;
      let opened = false;
      let landed = false;
      let sent = false;
      let convByReceived = false;
      let convByOpen = false;
      let convByClick = false;
      let targetMask = 0;
      for (let k = 0; k < sim.count; k++) {
        const kind = sim.kind[k];
        if (kind === K_SENT) {
          this.sent++;
          sent = true;
        } else if (kind === K_RECEIVED) {
          this.received++;
          received = true;
        } else if (kind === K_OPEN) {
          this.opens++;
          opened = true;
        } else if (kind === K_LANDING) {
          this.clicks++;
          landed = true;
          const target = sim.aux[k] as number;
          targetCounts[target] = (targetCounts[target] ?? 0) + 1;
          targetMask |= 1 << target;
        } else if (kind === K_CONVERSION) {
          const amount = isKrw(sim.currency[k] as number) ? (sim.amount[k] as number) : 0;
          this.purchases++;
          this.revenue += amount;
          if (received) {
            this.purchasesByReceived++;
            this.revenueByReceived += amount;
            convByReceived = true;
          }
          if (opened) {
            this.purchasesByOpen++;
            this.revenueByOpen += amount;
            convByOpen = true;
          }
          if (landed) {
            this.purchasesByClick++;
            this.revenueByClick += amount;
            convByClick = true;
          }
        }
        // K_FAILED and K_CONTROL rows feed no task field (failures = sent - received - unsettled).
      }
      if (sent) this.sentUsers++;
      if (received) this.receivedUsers++;
      if (opened) this.openUsers++;
      if (landed) this.clickUsers++;
      if (convByReceived) this.purchaseUsersByReceived++;
      if (convByOpen) this.purchaseUsersByOpen++;
      if (convByClick) this.purchaseUsersByClick++;
      for (let target = 0; targetMask !== 0; target++, targetMask >>>= 1) {
        if (targetMask & 1) targetUsers[target] = (targetUsers[target] ?? 0) + 1;
      }
    }
  }

  toMetricsTask(task: SandboxTask): MetricsTask {
    const cost = task.cost.amount;
    return {
      _id: task._id,
      campaign_id: task.campaign_id,
      scheduled_at: isoUtc(task.scheduled_at),
      sent_at: isoUtc(task.sent_at),
      channel: task.channel,
      sent_count: this.sent,
      received_count: this.received,
      open_count: this.opens,
      click_count: this.clicks,
      click_target_counts: this.clickTargets
        .map((target, i) => ({
          click_target: target,
          count: this.targetCounts[i] ?? 0,
          user_count: this.targetUsers[i] ?? 0,
        }))
        .filter((entry) => entry.count > 0),
      purchase_count: this.purchases,
      purchase_count_by_click: this.purchasesByClick,
      purchase_count_by_open: this.purchasesByOpen,
      purchase_count_by_received: this.purchasesByReceived,
      revenue: this.revenue,
      revenue_currency: "KRW",
      revenue_by_click: { value: this.revenueByClick, currency: "KRW" },
      revenue_by_open: { value: this.revenueByOpen, currency: "KRW" },
      revenue_by_received: { value: this.revenueByReceived, currency: "KRW" },
      cost,
      cost_currency: task.cost.currency,
      sent_user_count: this.sentUsers,
      received_user_count: this.receivedUsers,
      open_user_count: this.openUsers,
      click_user_count: this.clickUsers,
      purchase_user_count_by_click: this.purchaseUsersByClick,
      purchase_user_count_by_open: this.purchaseUsersByOpen,
      purchase_user_count_by_received: this.purchaseUsersByReceived,
      open_rate: ratio(this.opens, this.received),
      conversion_rate: ratio(this.purchasesByOpen, this.opens),
      roas: ratio(this.revenue, cost),
    };
  }
}

export function ratio(numerator: number, denominator: number): number {
  return denominator === 0 ? 0 : numerator / denominator;
}
