import { CHANNEL_PROFILES } from "./channels.js";
import { hash2, hashString, mix32, Rng } from "./random.js";
import { HOUR_MS } from "./time.js";
import type { Product } from "./types.js";

/**
 * Simulation of one send record: the shared source of truth of the CSV rows (rows.ts) and of
 * the metrics (metrics.ts), so the two agree by construction. A record's events are written into
 * reusable typed arrays; nothing is allocated per record.
 */

export const VIRTUAL_USERS = 1_000_000;

export const K_SENT = 0;
export const K_RECEIVED = 1;
export const K_FAILED = 2;
export const K_CONTROL = 3;
export const K_OPEN = 4;
export const K_LANDING = 5;
export const K_CONVERSION = 6;

const MAX_EVENTS = 24;
const CURRENCY_KRW = 0;
const CURRENCY_USD = 1;
/** Rate used to price the occasional USD payment from a KRW price. */
const KRW_PER_USD = 1380;

/** Everything needed to regenerate one round's records; computed once per round. */
export interface RoundPlan {
  taskId: string;
  scheduledAt: number;
  group: string;
  channel: string;
  isControl: boolean;
  records: number;
  /** Index within the task of this round's first record: A/B groups get disjoint users. */
  firstRecord: number;
  sentAt: number;
  spreadPerRecordMs: number;
  windowMs: number;
  now: number;
  seed: number;
  /** User of record i = (userOffset + (firstRecord + i) * userStride) mod VIRTUAL_USERS. */
  userOffset: number;
  userStride: number;
  pUnsettled: number;
  pFail: number;
  pOpen: number;
  pLanding: number;
  pConvOpen: number;
  pConvLanding: number;
  pConvControl: number;
  pRepeatOpen: number;
  failureCount: number;
  clickTargetCount: number;
}

export interface PlanInput {
  seed: number;
  now: number;
  campaignId: string;
  taskId: string;
  scheduledAt: number;
  sentAt: number;
  channel: keyof typeof CHANNEL_PROFILES;
  windowMs: number;
  group: string;
  isControl: boolean;
  records: number;
  firstRecord: number;
  groupUplift: number;
  sendSpreadMs: number;
}

/** Strides coprime with 1,000,000 (odd, not a multiple of 5) make record -> user a bijection. */
function coprimeStride(h: number): number {
  let stride = 1 + (h % (VIRTUAL_USERS - 2));
  while (stride % 2 === 0 || stride % 5 === 0) stride++;
  return stride;
}

export function makePlan(input: PlanInput): RoundPlan {
  const profile = CHANNEL_PROFILES[input.channel];
  const taskHash = hash2(input.seed, hashString(input.taskId));
  const campaignHash = hash2(input.seed, hashString(input.campaignId));
  const uplift = input.group === "그룹B" ? input.groupUplift : 1;
  return {
    taskId: input.taskId,
    scheduledAt: input.scheduledAt,
    group: input.group,
    channel: input.isControl ? "control" : input.channel,
    isControl: input.isControl,
    records: input.records,
    firstRecord: input.firstRecord,
    sentAt: input.sentAt,
    spreadPerRecordMs: input.records > 0 ? input.sendSpreadMs / input.records : 0,
    windowMs: input.windowMs,
    now: input.now,
    seed: hash2(taskHash, hashString(input.group)),
    // Rounds of one campaign share the stride so recurring sends reach overlapping users.
    userOffset: mix32(taskHash) % VIRTUAL_USERS,
    userStride: coprimeStride(mix32(campaignHash ^ 0x5bd1e995)),
    pUnsettled: 0.015,
    pFail: profile.failRate,
    pOpen: Math.min(0.9, profile.openRate * uplift),
    pLanding: 0.45,
    pConvOpen: Math.min(0.9, 0.06 * uplift),
    pConvLanding: Math.min(0.9, 0.16 * uplift),
    pConvControl: 0.012,
    pRepeatOpen: 0.25,
    failureCount: profile.failures.length,
    clickTargetCount: profile.clickTargets.length,
  };
}

/** Reusable simulation state of one record. */
export class RecordSim {
  user = 0;
  count = 0;
  readonly kind = new Uint8Array(MAX_EVENTS);
  readonly time = new Float64Array(MAX_EVENTS);
  /** Failure index, click-target index or product index, by kind. */
  readonly aux = new Int32Array(MAX_EVENTS);
  /** Payment of a conversion. */
  readonly amount = new Float64Array(MAX_EVENTS);
  readonly currency = new Uint8Array(MAX_EVENTS);
  /** Which custom/internal property variant an event row uses (0 = empty). */
  readonly variant = new Uint8Array(MAX_EVENTS);
  private readonly rng = new Rng(0);

  constructor(private readonly products: readonly Product[]) {}

  private push(kind: number, time: number, aux: number): void {
    const n = this.count;
    this.kind[n] = kind;
    this.time[n] = time;
    this.aux[n] = aux;
    this.amount[n] = 0;
    this.currency[n] = CURRENCY_KRW;
    this.variant[n] = 0;
    this.count = n + 1;
  }

  private pushConversion(time: number): void {
    const rng = this.rng;
    const productIndex = rng.int(this.products.length);
    const price = this.products[productIndex]?.price ?? 10000;
    const quantity = rng.chance(0.15) ? 2 : 1;
    this.push(K_CONVERSION, time, productIndex);
    const n = this.count - 1;
    if (rng.chance(0.06)) {
      this.currency[n] = CURRENCY_USD;
      this.amount[n] = Math.round(((price * quantity) / KRW_PER_USD) * 100) / 100;
    } else {
      this.amount[n] = price * quantity;
    }
    this.variant[n] = rng.int(4);
  }

  /** Simulates record `index` of the round. Events after `now` have not happened and are left out. */
  run(plan: RoundPlan, index: number): void {
    const rng = this.rng;
    rng.reseed(hash2(plan.seed, index));
    this.count = 0;
    this.user = (plan.userOffset + (plan.firstRecord + index) * plan.userStride) % VIRTUAL_USERS;
    const created = plan.sentAt + Math.floor(index * plan.spreadPerRecordMs + rng.next() * 1000);
    const now = plan.now;
    // The conversion deadline runs from the send record's creation; events after it are not read.
    const deadline = Math.min(created + plan.windowMs, now - 1);
    if (plan.isControl) {
      this.push(K_CONTROL, created, 0);
      if (rng.next() < plan.pConvControl) {
        const t = created + 60_000 + Math.floor(rng.next() * plan.windowMs);
        if (t <= deadline) this.pushConversion(t);
      }
      return;
    }
    this.push(K_SENT, created, 0);
    const outcome = rng.next();
    if (outcome < plan.pUnsettled) return;
    if (outcome < plan.pUnsettled + plan.pFail) {
      const t = created + 200 + Math.floor(rng.next() * 90_000);
      if (t < now) this.push(K_FAILED, t, rng.int(plan.failureCount));
      return;
    }
    let t = created + 300 + Math.floor(rng.next() * 20_000);
    if (t >= now) return;
    this.push(K_RECEIVED, t, 0);
    if (rng.next() >= plan.pOpen) return;
    // Most opens come soon after receipt; a long tail reaches into the conversion window.
    const r = rng.next();
    t += 5_000 + Math.floor(r * r * r * Math.min(plan.windowMs, 48 * HOUR_MS));
    if (t > deadline) return;
    this.push(K_OPEN, t, 0);
    this.variant[this.count - 1] = rng.int(4);
    let landed = false;
    if (rng.next() < plan.pLanding) {
      t += 2_000 + Math.floor(rng.next() * 120_000);
      if (t > deadline) return;
      this.push(K_LANDING, t, rng.int(plan.clickTargetCount));
      this.variant[this.count - 1] = rng.int(4);
      landed = true;
    }
    if (rng.next() < (landed ? plan.pConvLanding : plan.pConvOpen)) {
      const q = rng.next();
      t += 30_000 + Math.floor(q * q * plan.windowMs * 0.3);
      if (t > deadline) return;
      this.pushConversion(t);
    }
    while (this.count < MAX_EVENTS - 2 && rng.next() < plan.pRepeatOpen) {
      t += 60_000 + Math.floor(rng.next() * 6 * HOUR_MS);
      if (t > deadline) return;
      this.push(K_OPEN, t, 0);
      this.variant[this.count - 1] = rng.int(4);
      if (rng.next() < 0.3) {
        t += 2_000 + Math.floor(rng.next() * 60_000);
        if (t > deadline) return;
        this.push(K_LANDING, t, rng.int(plan.clickTargetCount));
        this.variant[this.count - 1] = rng.int(4);
      }
    }
  }
}

export function isKrw(currency: number): boolean {
  return currency === CURRENCY_KRW;
}
