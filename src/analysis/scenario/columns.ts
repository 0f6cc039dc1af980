import { ratio, round6 } from "../stats.js";

/** The scenario export's metric columns (spec 2.5) and the ratios recomputed from them. */

export const SEND = "발송 수(건)";
export const SEND_USERS = "발송 수(명)";
export const OPEN = "오픈 수(건)";
export const OPEN_USERS = "오픈 수(명)";
export const CONV = "전환 수(건)";
export const CONV_USERS = "전환 수(명)";
export const REVENUE = "전환 수익";
export const COST = "집행 비용";
/** Columns that add up over days: 건 counts and money. 명 columns count distinct users per
 * period, so a node's 명 total may be below the sum of its days and is not checked. */
export const ADDITIVE = new Set([SEND, OPEN, CONV, REVENUE, COST]);
export const BRANCH_SEPARATOR = "·";
/** Ratio columns recomputed from summed counts with the spec's formulas (0 for 0 denominators). */
export function withRatios(t: Record<string, number>): Record<string, number> {
  const v = (k: string) => t[k] ?? 0;
  return {
    ...t,
    "오픈율(건)": round6(ratio(v(OPEN), v(SEND))),
    "오픈율(명)": round6(ratio(v(OPEN_USERS), v(SEND_USERS))),
    "전환율(건)": round6(ratio(v(CONV), v(OPEN))),
    "전환율(명)": round6(ratio(v(CONV_USERS), v(OPEN_USERS))),
    ROAS: round6(ratio(v(REVENUE), v(COST))),
    객단가: round6(ratio(v(REVENUE), v(CONV))),
    CAC: round6(ratio(v(COST), v(CONV))),
  };
}

export const RATIO_COLUMNS = new Set([
  "오픈율(건)",
  "오픈율(명)",
  "전환율(건)",
  "전환율(명)",
  "ROAS",
  "객단가",
  "CAC",
]);
