import type { ScheduleType } from "../../api/schemas.js";
import { CHANNEL_PROFILES } from "./channels.js";
import { hash2, hash3, hex8, Rng } from "./random.js";
import { DAY_MS, HOUR_MS, kstDayNumber, kstDayStart } from "./time.js";
import type { CampaignRole, Channel, SandboxCampaign, SandboxRound, SandboxTask } from "./types.js";

/**
 * The campaigns of the sandbox. A fixed table of realistic campaigns; the seed varies dates,
 * audiences, hours and ids. Every round's records are only counted here: rows are generated on
 * demand (records.ts), never stored.
 */

type AbMode = "none" | "ab" | "ab_control";

interface CampaignSpec {
  name: string;
  tags: string[];
  schedule: ScheduleType;
  channel: Channel;
  role: CampaignRole;
  ab: AbMode;
  conversion: SandboxCampaign["conversion"];
  /** Tasks every `everyDays` days, `count` of them, the last `lastDaysAgo` days before today. */
  everyDays: number;
  count: number;
  lastDaysAgo: number;
  /** Send hour in KST (minutes vary by seed unless `exactTime`). */
  hour: number;
  /** Records per task (all groups together), a range. */
  audience: [number, number];
}

const PURCHASE = { event_type: "purchase", window_unit: "d", window_amount: 3 } as const;
const ORDER_24H = { event_type: "order_completed", window_unit: "h", window_amount: 24 } as const;

const SPECS: readonly CampaignSpec[] = [
  {
    name: "[정기] 주간 신상품 소식",
    tags: ["신상품", "정기"],
    schedule: "recurring",
    channel: "alimtalk",
    role: "normal",
    ab: "none",
    conversion: PURCHASE,
    everyDays: 7,
    count: 25,
    lastDaysAgo: 2,
    hour: 10,
    audience: [600, 1400],
  },
  {
    name: "봄맞이 최대 50% 세일 안내",
    tags: ["세일", "시즌"],
    schedule: "once",
    channel: "friendtalk",
    role: "normal",
    ab: "ab_control",
    conversion: { event_type: "purchase", window_unit: "d", window_amount: 7 },
    everyDays: 1,
    count: 1,
    lastDaysAgo: 150,
    hour: 11,
    audience: [3000, 4000],
  },
  {
    name: "장바구니 이탈 리마인드",
    tags: ["리마인드", "자동화"],
    schedule: "api_trigger",
    channel: "app_push",
    role: "normal",
    ab: "none",
    conversion: ORDER_24H,
    everyDays: 1,
    count: 45,
    lastDaysAgo: 0,
    hour: 9,
    audience: [80, 260],
  },
  {
    name: "회원가입 환영 쿠폰",
    tags: ["신규", "쿠폰", "자동화"],
    schedule: "api_trigger",
    channel: "alimtalk",
    role: "normal",
    ab: "none",
    conversion: {
      event_type: "purchase",
      window_unit: "h",
      window_amount: 72,
      // An opaque extra condition, as the console can set one (spec 2.6: structure not shown).
      // Every conversion the sandbox generates satisfies it (revenue > 0, KRW or USD).
      condition: {
        type: "event_property",
        logic: "and",
        filters: [
          { key: "revenue", operator: "greater_than", value: 0 },
          { key: "currency", operator: "in", values: ["KRW", "USD"] },
        ],
      },
    },
    everyDays: 1,
    count: 60,
    lastDaysAgo: 1,
    hour: 8,
    audience: [50, 160],
  },
  {
    name: "블랙프라이데이 사전 알림",
    tags: ["세일", "블랙프라이데이"],
    schedule: "once",
    channel: "sms",
    role: "normal",
    ab: "ab_control",
    conversion: PURCHASE,
    everyDays: 1,
    count: 1,
    lastDaysAgo: 40,
    hour: 18,
    audience: [2500, 3500],
  },
  {
    name: "VIP 전용 시크릿 쿠폰",
    tags: ["VIP", "쿠폰"],
    schedule: "once",
    channel: "brand_message",
    role: "normal",
    ab: "none",
    conversion: { event_type: "purchase", window_unit: "d", window_amount: 5 },
    everyDays: 1,
    count: 1,
    lastDaysAgo: 95,
    hour: 12,
    audience: [400, 700],
  },
  {
    name: "월간 뉴스레터",
    tags: ["뉴스레터", "정기"],
    schedule: "recurring",
    channel: "email",
    role: "normal",
    ab: "none",
    conversion: { event_type: "purchase", window_unit: "d", window_amount: 7 },
    everyDays: 30,
    count: 6,
    lastDaysAgo: 10,
    hour: 7,
    audience: [2500, 3500],
  },
  {
    name: "앱 푸시 문구 A/B 테스트",
    tags: ["A/B", "푸시"],
    schedule: "once",
    channel: "app_push",
    role: "normal",
    ab: "ab_control",
    conversion: ORDER_24H,
    everyDays: 1,
    count: 1,
    lastDaysAgo: 60,
    hour: 20,
    audience: [3000, 4000],
  },
  {
    name: "RCS 리치카드 신상품 소개",
    tags: ["신상품", "RCS"],
    schedule: "once",
    channel: "rcs",
    role: "normal",
    ab: "none",
    conversion: PURCHASE,
    everyDays: 1,
    count: 1,
    lastDaysAgo: 120,
    hour: 13,
    audience: [1200, 2000],
  },
  {
    name: "휴면 고객 재방문 유도",
    tags: ["휴면", "재활성화"],
    schedule: "recurring",
    channel: "sms",
    role: "normal",
    ab: "ab",
    conversion: { event_type: "purchase", window_unit: "d", window_amount: 7 },
    everyDays: 14,
    count: 12,
    lastDaysAgo: 5,
    hour: 15,
    audience: [500, 900],
  },
  {
    name: "생일 축하 쿠폰",
    tags: ["생일", "쿠폰", "자동화"],
    schedule: "api_trigger",
    channel: "email",
    role: "normal",
    ab: "none",
    conversion: { event_type: "purchase", window_unit: "d", window_amount: 14 },
    everyDays: 1,
    count: 30,
    lastDaysAgo: 0,
    hour: 0,
    audience: [20, 60],
  },
  {
    name: "주말 타임세일",
    tags: ["세일", "주말"],
    schedule: "recurring",
    channel: "app_push",
    role: "normal",
    ab: "none",
    conversion: { event_type: "order_completed", window_unit: "h", window_amount: 48 },
    everyDays: 7,
    count: 24,
    lastDaysAgo: 3,
    hour: 17,
    audience: [900, 1600],
  },
  {
    name: "배송 완료 리뷰 요청",
    tags: ["리뷰", "자동화"],
    schedule: "api_trigger",
    channel: "friendtalk",
    role: "normal",
    ab: "none",
    conversion: { event_type: "review_written", window_unit: "d", window_amount: 7 },
    everyDays: 1,
    count: 40,
    lastDaysAgo: 0,
    hour: 14,
    audience: [60, 180],
  },
  {
    name: "가을 시즌오프 A/B 테스트",
    tags: ["A/B", "시즌오프"],
    schedule: "once",
    channel: "alimtalk",
    role: "normal",
    ab: "ab_control",
    conversion: PURCHASE,
    everyDays: 1,
    count: 1,
    lastDaysAgo: 75,
    hour: 10,
    audience: [3000, 4000],
  },
  {
    name: "재입고 알림",
    tags: ["재입고", "자동화"],
    schedule: "api_trigger",
    channel: "app_push",
    role: "normal",
    ab: "none",
    conversion: ORDER_24H,
    everyDays: 2,
    count: 50,
    lastDaysAgo: 1,
    hour: 11,
    audience: [30, 120],
  },
  {
    name: "카드사 제휴 할인 안내 A/B",
    tags: ["제휴", "A/B"],
    schedule: "once",
    channel: "rcs",
    role: "normal",
    ab: "ab_control",
    conversion: PURCHASE,
    everyDays: 1,
    count: 1,
    lastDaysAgo: 25,
    hour: 12,
    audience: [2000, 3000],
  },
  {
    name: "신규 브랜드 입점 소식",
    tags: ["브랜드", "신상품"],
    schedule: "once",
    channel: "brand_message",
    role: "normal",
    ab: "none",
    conversion: PURCHASE,
    everyDays: 1,
    count: 1,
    lastDaysAgo: 170,
    hour: 19,
    audience: [900, 1500],
  },
  {
    name: "포인트 소멸 예정 안내",
    tags: ["포인트", "정기"],
    schedule: "recurring",
    channel: "alimtalk",
    role: "normal",
    ab: "none",
    conversion: { event_type: "purchase", window_unit: "d", window_amount: 10 },
    everyDays: 30,
    count: 6,
    lastDaysAgo: 4,
    hour: 9,
    audience: [1500, 2500],
  },
  {
    name: "설 연휴 배송 일정 안내",
    tags: ["공지", "배송"],
    schedule: "once",
    channel: "sms",
    role: "normal",
    ab: "none",
    conversion: { event_type: "order_completed", window_unit: "h", window_amount: 12 },
    everyDays: 1,
    count: 1,
    lastDaysAgo: 110,
    hour: 16,
    audience: [1500, 2500],
  },
  {
    name: "앱 설치 유도 이메일 A/B",
    tags: ["A/B", "앱설치"],
    schedule: "once",
    channel: "email",
    role: "normal",
    ab: "ab_control",
    conversion: { event_type: "app_installed", window_unit: "d", window_amount: 7 },
    everyDays: 1,
    count: 1,
    lastDaysAgo: 50,
    hour: 10,
    audience: [2500, 3500],
  },
  {
    name: "연말 결산 리포트 발송",
    tags: ["리포트"],
    schedule: "once",
    channel: "email",
    role: "failing_export",
    ab: "none",
    conversion: PURCHASE,
    everyDays: 1,
    count: 1,
    lastDaysAgo: 30,
    hour: 9,
    audience: [800, 1200],
  },
  {
    name: "오늘의 특가 (집계 중)",
    tags: ["특가", "데일리"],
    schedule: "recurring",
    channel: "app_push",
    role: "not_ready",
    ab: "none",
    conversion: { event_type: "purchase", window_unit: "d", window_amount: 7 },
    everyDays: 1,
    count: 2,
    lastDaysAgo: 0,
    hour: 0,
    audience: [300, 500],
  },
  {
    name: "[대용량] 전체 회원 데일리 푸시",
    tags: ["전체발송", "데일리"],
    schedule: "recurring",
    channel: "app_push",
    role: "huge_sends",
    ab: "none",
    conversion: { event_type: "purchase", window_unit: "d", window_amount: 1 },
    everyDays: 1,
    count: 20,
    lastDaysAgo: 6,
    hour: 12,
    audience: [108_000, 112_000],
  },
  {
    name: "[A/B] 추천 상품 문구 실험 (70일)",
    tags: ["A/B", "추천", "실험"],
    schedule: "recurring",
    channel: "friendtalk",
    role: "many_rounds",
    ab: "ab",
    conversion: { event_type: "purchase", window_unit: "d", window_amount: 1 },
    everyDays: 1,
    count: 70,
    lastDaysAgo: 8,
    hour: 19,
    audience: [60, 120],
  },
];

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
  SPECS.forEach((listed, index) => {
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
