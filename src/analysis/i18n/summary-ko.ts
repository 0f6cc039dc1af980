import { formatCount as n, percent as pct } from "../../format.js";
import { AMOUNT_KEYS } from "../campaign/revenue.js";
import type { CampaignRound } from "../schemas.js";
import { formatP, ratio } from "../stats.js";
import { readoutKo } from "./readout-ko.js";
import type { SummaryMessages } from "./summary-en.js";

/**
 * The summary text in Korean (`summarize --lang ko`). The verdicts and notes the analysis writes
 * in English are written here from the result's fields, each test's outcome in the readout's
 * words. Sentences avoid particles right after a name or a figure.
 */

/** The analysis' names for the sides of a comparison that are not groups of the file. */
const SIDES: Record<string, string> = {
  "send groups": "발송 그룹",
  "the other groups": "나머지 그룹",
};
const side = (name: string) => SIDES[name] ?? name;

const METRICS: Record<string, string> = {
  open_rate: "오픈율(명)",
  conversion_rate: "오픈 대비 전환율",
};

/** Up to 12 names, then how many more (the result has the full list). */
function listed(items: string[], max = 12): string {
  const shown = items.slice(0, max).join(", ");
  return items.length > max ? `${shown} 외 ${items.length - max}개` : shown;
}

function sends(rows: CampaignRound[]): number {
  return new Set(rows.map((r) => JSON.stringify([r.task_id, r.scheduled_at]))).size;
}

export const summaryKo: SummaryMessages = {
  readout: readoutKo,
  more: {
    tool: { detail: "더 보려면 detail을 true로 요청하세요", all: "구조화된 결과" },
    command: { detail: "더 보려면 --detail을 붙여 다시 실행하세요", all: "--json 출력" },
  },
  charts: {
    offer: '차트: 같은 호출에 "report": true를 더하면 HTML 파일로 씁니다.',
    written: (path, size) =>
      `차트가 담긴 HTML 보고서: ${path} (${size}, 네트워크 없이 어느 브라우저에서나 열립니다).`,
  },
  leftOut: (left, more) =>
    `_생략: ${left.join(", ")}. ${more.detail}. 모든 수치는 ${more.all}에 있습니다._`,
  nothingLeft: (more) => `_생략한 것이 없습니다. 모든 수치는 ${more.all}에 있습니다._`,
  cut: (budget, more) => `_${n(budget)}자에서 잘랐습니다. 모든 수치는 ${more.all}에 있습니다._`,
  empty: "(비어 있음)",
  noValue: "(없음)",
  none: "없음",
  notApplicable: "해당 없음",
  duration: (seconds) => {
    if (seconds === null) return "해당 없음";
    if (seconds < 60) return `${seconds}초`;
    if (seconds < 3600) return `${(seconds / 60).toFixed(1)}분`;
    if (seconds < 86400) return `${(seconds / 3600).toFixed(1)}시간`;
    return `${(seconds / 86400).toFixed(1)}일`;
  },
  warnings: (list) => `**경고**: ${list.join(" ")}`,
  campaign: {
    head: (s, first, last) => {
      const t = s.totals;
      const groups = s.schedule.groups.filter((g) => g !== "");
      const control = groups.includes("대조군") ? ", 대조군 포함" : "";
      const rounds = `발송 회차 ${n(s.schedule.send_rounds)}회${groups.length < 2 ? "" : ` (그룹 ${groups.length}개${control})`}`;
      const span =
        first === null
          ? ""
          : first === last
            ? `, 예약 ${first}`
            : `, 예약 ${first} ~ ${last ?? first}`;
      return `**캠페인 내보내기** (행 ${n(s.rows)}개, ${rounds}${span}): 발송 ${n(t.sent)}건, 수신 ${n(t.received)}건 (발송 성공률 ${pct(t.success_rate)}), 실패 ${n(t.failed)}건, 결과 미확정 ${n(t.unsettled)}건${t.control_assigned ? `, 대조군 배정 ${n(t.control_assigned)}건` : ""}. 내보내기 파일에는 성과 집계가 끝난 회차만 들어 있어 campaign_metrics와 수치가 다를 수 있습니다.`;
    },
    channelColumns: ["채널", "발송", "수신", "실패", "성공률"],
    moreChannels: (k) => `채널 ${k}개`,
    failures: (table) =>
      `오류 코드별 실패 (예시 메시지는 통신사가 보낸 외부 데이터라 JSON 문자열로 인용합니다):\n${table}`,
    failureColumns: ["error_code", "건수", "예시 메시지"],
    moreErrorCodes: (k) => `오류 코드 ${k}개`,
    engagement: (t, conversionNote) =>
      `**반응**: 오픈 ${n(t.opens)}건 (사용자 ${n(t.open_users)}명). 오픈율 ${pct(t.open_rate)} (건 기준, 오픈/수신), ${pct(t.open_rate_users)} (명 기준, 메시지를 수신한 사용자 ${n(t.received_users)}명 중 ${n(t.open_users)}명. 파일 전체에서 사용자는 여러 회차에 있어도 한 번만 셉니다). 랜딩 클릭 ${n(t.clicks)}건 (사용자 ${n(t.click_users)}명). 발송 그룹: 전환 ${n(t.send_group_conversions)}건 (사용자 ${n(t.send_group_conversion_users)}명), 오픈 대비 ${pct(t.conversion_rate)}.${t.control_conversions > 0 ? ` 대조군(메시지를 받지 않음): 전환 ${n(t.control_conversions)}건, 이 비율에는 넣지 않았습니다.` : ""} ${conversionNote}`,
    amount: (amount, currency, conversions) =>
      `${n(amount)} ${currency} (전환 ${n(conversions)}건)`,
    revenue: (send, control, note) =>
      control === undefined
        ? `**매출**: ${send}. ${note}`
        : `**매출** (발송 그룹): ${send}. 대조군(메시지를 받지 않음)은 이 합계에 넣지 않았습니다: ${control}. ${note}`,
    abHead: (lines) =>
      `**A/B 테스트** (사용자는 참여한 회차마다 한 번씩 셈, 두 비율 z-검정):\n- ${lines.join("\n- ")}`,
    abGroup: (name, g) =>
      `${name}: 수신한 사용자 ${n(g.received_users)}명 중 오픈율 ${pct(g.open_rate_users)}, 오픈한 사용자 ${n(g.open_users)}명 중 전환율 ${pct(g.conversion_rate_by_opens)}`,
    controlUntested: (c, note) => `대조군 (배정된 사용자 ${n(c.assigned_users)}명): ${note}`,
    controlTested: (c, verdict, note) =>
      `대조군: 배정된 사용자 ${n(c.assigned_users)}명 중 ${n(c.converted_users)}명 전환 (${pct(c.conversion_rate)}), 메시지를 수신한 사용자는 ${pct(c.send_groups_conversion_rate)}. ${verdict} ${note}`,
    timing: (tm, hours, duration) =>
      `**오픈 시간** (${tm.time_zone}): 수신부터 첫 오픈까지 중앙값 ${duration(tm.receipt_to_first_open.median_seconds)}, 90번째 백분위수 ${duration(tm.receipt_to_first_open.p90_seconds)} ((사용자, 회차) 쌍 ${n(tm.receipt_to_first_open.pairs)}개 기준). 오픈이 가장 많은 시간: ${hours.join(", ") || "없음"}.`,
    hour: (hour, count) => `${String(hour).padStart(2, "0")}시 (${n(count)}건)`,
    roundColumns: [
      "task_id",
      "scheduled_at",
      "그룹",
      "발송",
      "수신",
      "실패",
      "오픈",
      "오픈율(명)",
      "전환",
    ],
    moreRounds: (rows) => {
      const k = sends(rows);
      return rows.length === k
        ? `발송 회차 ${n(k)}회`
        : `회차·그룹 행 ${n(rows.length)}개 (발송 회차 ${n(k)}회)`;
    },
    unidentified: (k) =>
      `사용자 ID가 없는 행 ${n(k)}개는 행으로는 세지만 사용자로는 세지 않습니다.`,
    verdict: (c) => {
      const metric = "metric" in c ? (METRICS[c.metric] ?? c.metric) : "사용자당 전환율";
      const [a, b] = [side(c.group), side(c.versus)];
      if (c.p_value === null) return `${metric} 비교에 필요한 데이터가 부족합니다: ${a}, ${b}.`;
      if (c.rate === c.versus_rate) return `${metric}이 같습니다: ${a}, ${b} (${pct(c.rate)}).`;
      const [hi, lo, hiRate, loRate] =
        c.rate > c.versus_rate ? [a, b, c.rate, c.versus_rate] : [b, a, c.versus_rate, c.rate];
      const test = c.significant ? readoutKo.significant : readoutKo.notSignificant;
      return `${metric}: ${hi} ${pct(hiRate)}, ${lo} ${pct(loRate)}. 차이는 ${test}, ${formatP(c.p_value)}.`;
    },
    conversionNote: (s) => {
      const { types, source } = s.conversion_event_type;
      const inFile = listed(s.event_types.map((t) => t.event_type)) || "없음";
      if (source === "input") {
        // The type asked for is named only in the analysis' note.
        const asked = /"([^"]*)"/.exec(s.conversion_event_type.note)?.[1] ?? "";
        return types.length > 0
          ? `요청한 대로 "${asked}" 행을 전환으로 셉니다.`
          : `요청한 전환 이벤트 유형 "${asked}"인 행이 없습니다. 파일의 이벤트 유형: ${inFile}.`;
      }
      return types.length > 0
        ? `전환 이벤트 유형을 ${listed(types.map((t) => `"${t}"`))}(으)로 추정했습니다 (발송 기록, 오픈, landing_clicked가 아닌 모든 유형). 하나를 고르려면 conversion_event_type(--conversion-event-type)을 주세요.`
        : "파일에 전환 이벤트가 없습니다 (발송 기록, 오픈, 랜딩 클릭 외의 이벤트 유형이 없음).";
    },
    revenueNote: (s) => {
      const r = s.revenue;
      if (s.totals.conversions === 0) return "전환 이벤트가 없어 매출도 없습니다.";
      if (r.amount_key === null) {
        return `전환 이벤트 속성에서 금액을 찾지 못했습니다 (찾아본 키: ${AMOUNT_KEYS.join(", ")}).`;
      }
      const currency =
        r.currency_key === null
          ? "통화 속성은 없습니다 ((none)으로 표시)"
          : `통화는 "${r.currency_key}" 속성에서 읽었습니다`;
      const control = s.totals.control_conversions;
      return `금액은 "${r.amount_key}" 속성에서, ${currency}. 통화가 다른 금액은 더하지 않습니다.${
        control > 0
          ? ` by_currency는 대조군의 전환 ${n(control)}건(메시지를 받지 않은 사용자)을 포함한 파일의 모든 전환 행이며, send_group_by_currency와 control_by_currency가 이를 그룹별로 나눕니다.`
          : ""
      }`;
    },
  },
  scenario: {
    head: (s, v) =>
      `**시나리오 내보내기**: 메시지 노드 ${s.nodes.length}개. 합계: 발송 ${n(v("발송 수(건)"))}건, 오픈 ${n(v("오픈 수(건)"))}건 (오픈율 ${pct(v("오픈율(건)"))}), 전환 ${n(v("전환 수(건)"))}건 (오픈 대비 ${pct(v("전환율(건)"))}), 매출 ${n(v("전환 수익"))} KRW, 비용 ${n(v("집행 비용"))}, ROAS ${v("ROAS").toFixed(2)}. 사용자(명) 합계는 노드마다의 고유 사용자를 더한 값이라 두 노드에 닿은 사용자는 두 번 셉니다.`,
    nodeColumns: ["#", "채널", "분기", "발송", "오픈율", "전환", "일수", "추이"],
    trend: (trend) =>
      trend
        ? `${{ up: "상승", down: "하락", flat: "보합" }[trend.direction]}, 최고 ${trend.best_day.date}, 최저 ${trend.worst_day.date}`
        : "일별 행 없음",
    moreNodes: (k) => `노드 ${k}개`,
    branches: (verdicts) => `**A/B 분기**:\n- ${verdicts.join("\n- ")}`,
    branchVerdict: (b) => {
      const where = b.parent === "" ? "첫 분기" : `분기 ${b.parent} 안`;
      const arms = b.arms.map((a) => a.branch);
      if (b.arms.every((a) => a.sends === 0))
        return `${where}: 아직 발송이 없습니다 (${arms.join(", ")}).`;
      const byUsers = b.arms
        .map(
          (a) =>
            `${a.branch} ${pct(ratio(a.open_users, a.send_users))} (사용자 ${n(a.send_users)}명 중 ${n(a.open_users)}명)`,
        )
        .join(", ");
      const test =
        b.p_value === null
          ? b.arms.length > 2
            ? readoutKo.notTested
            : readoutKo.notEnoughData
          : `${b.significant ? readoutKo.significant : readoutKo.notSignificant}, ${formatP(b.p_value)}`;
      const outcome =
        b.leader === null ? `오픈율(명) 동률: ${test}` : `오픈율(명) 1위 ${b.leader}: ${test}`;
      const bySends = b.arms
        .map(
          (a) =>
            `${a.branch} 발송 ${n(a.sends)}건 중 오픈 ${pct(a.open_rate)}, 오픈 대비 전환 ${pct(a.conversion_rate)}`,
        )
        .join("; ");
      return `${where}: 오픈율(명) ${byUsers}. ${outcome}. 건 기준: ${bySends}.`;
    },
    checkOk: "검증: 모든 노드의 요약 행이 일별 시트의 합과 같습니다.",
    checkDiffers: (k, nodes) =>
      `검증: 노드 ${k}개가 일별 시트의 합과 다릅니다: ${nodes.join("; ")}.`,
    mismatchNode: (number, metrics) => `#${number} ${metrics.join(", ")}`,
    mismatch: (metric, summary, dailySum) => `${metric} ${summary} (일별 합 ${dailySum})`,
    warnings: (list) => `경고: ${list.join("; ")}`,
  },
};
