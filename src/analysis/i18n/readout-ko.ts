import type { ReadoutMessages } from "./readout-en.js";

/**
 * The analysis' findings in Korean, written from the result's fields (the result's own sentences
 * are English, for the model). Statistical wording for meaning: 유의함 / 유의하지 않음 at the 95%
 * confidence level (신뢰수준).
 */
export const readoutKo: ReadoutMessages = {
  significant: "유의함 (95% 신뢰수준)",
  notSignificant: "유의하지 않음 (95% 신뢰수준)",
  notEnoughData: "검정할 데이터 부족",
  notTested: "검정하지 않음 (분기가 셋 이상)",
  // The analysis' three cases, told apart by the same counts it used: a comparison was made; the
  // file has no conversion of the control group; no send-group user received a message.
  controlNote: (control, totals) =>
    control.comparison !== null
      ? "발송 그룹은 메시지를 수신한 사용자의 전환을, 대조군은 배정된 사용자의 전환을 셉니다(둘 다 사용자 기준). 서비스가 오픈한 메시지에 기여한 전환만 내보낸다면 발송 그룹이 유리해져 효과가 부풀려집니다."
      : totals.control_conversions === 0
        ? "파일에 대조군의 전환 행이 없어 발송 그룹과 비교할 수 없습니다."
        : "메시지를 수신한 발송 그룹 사용자가 없어 대조군과 비교할 대상이 없습니다.",
  warnings: {
    truncated: (line) =>
      `파일이 줄바꿈으로 끝나지 않아 잘렸을 수 있습니다(다운로드가 중단되었을 수 있음). 마지막 행(${line}번째 줄)도 셌습니다. 수치가 낮아 보이면 다시 다운로드하거나 내보내세요.`,
    noNumberInSheetName: (sheet) => `일별 시트 "${sheet}"의 이름에 #번호가 없습니다.`,
    noDailySheet: (node) => `노드 #${node}에 일별 시트가 없습니다.`,
    noDateHeader: (sheet) => `시트 "${sheet}"에 날짜 머리글 행이 없어 건너뛰었습니다.`,
    badSummaryRow: (row) => `요약 시트 ${row}번째 행의 #이 숫자가 아니어서 건너뛰었습니다.`,
  },
};
