import { formatCount, percent } from "../../format.js";
import type { ScenarioNode, ScenarioSummary } from "../schemas.js";
import { formatP, ratio, round6, twoProportionTest } from "../stats.js";
import { BRANCH_SEPARATOR, CONV, OPEN, OPEN_USERS, SEND, SEND_USERS } from "./columns.js";

/**
 * The scenario's branch readout: at each A/B split, its arms side by side on open users per send
 * user (명), with a significance test when there are two.
 */

export function branchReadout(nodes: ScenarioNode[]): ScenarioSummary["branches"] {
  const branches = [...new Set(nodes.map((n) => n.branch).filter((b) => b !== ""))];
  // Every prefix of a branch path is a branch too ("B·A" implies "B").
  for (const b of [...branches]) {
    const parts = b.split(BRANCH_SEPARATOR);
    for (let i = 1; i < parts.length; i++) branches.push(parts.slice(0, i).join(BRANCH_SEPARATOR));
  }
  const byParent = new Map<string, Set<string>>();
  for (const b of new Set(branches)) {
    const cut = b.lastIndexOf(BRANCH_SEPARATOR);
    const parent = cut < 0 ? "" : b.slice(0, cut);
    const set = byParent.get(parent) ?? new Set<string>();
    set.add(b);
    byParent.set(parent, set);
  }
  const out: ScenarioSummary["branches"] = [];
  for (const [parent, armSet] of [...byParent.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
    const arms = [...armSet].sort().map((arm) => {
      // An arm covers its own nodes and those of branches nested inside it.
      const inArm = nodes.filter(
        (n) => n.branch === arm || n.branch.startsWith(arm + BRANCH_SEPARATOR),
      );
      const s = (k: string) => inArm.reduce((a, n) => a + (n.totals[k] ?? 0), 0);
      return {
        branch: arm,
        sends: s(SEND),
        open_rate: round6(ratio(s(OPEN), s(SEND))),
        conversion_rate: round6(ratio(s(CONV), s(OPEN))),
        sendUsers: s(SEND_USERS),
        openUsers: s(OPEN_USERS),
      };
    });
    if (arms.length < 2) continue;
    const where = parent === "" ? "At the first split" : `Inside branch ${parent}`;
    // Ranked, shown and tested on one measure: open users per send user (명). The 건 rates
    // follow as context only, so the text never ranks on one rate and shows another.
    const userRate = (a: (typeof arms)[number]) => ratio(a.openUsers, a.sendUsers);
    const ranked = [...arms].sort((a, b) => userRate(b) - userRate(a));
    const top = ranked[0] as (typeof arms)[number];
    const next = ranked[1] as (typeof arms)[number];
    const test =
      arms.length === 2
        ? twoProportionTest(top.openUsers, top.sendUsers, next.openUsers, next.sendUsers)
        : null;
    const tie = userRate(top) === userRate(next);
    const byUsers = arms
      .map(
        (a) =>
          `${a.branch} ${percent(userRate(a))} (${formatCount(a.openUsers)} of ${formatCount(a.sendUsers)} users)`,
      )
      .join(" vs ");
    const bySends = arms
      .map(
        (a) =>
          `${a.branch} ${percent(a.open_rate)} of ${formatCount(a.sends)} sends, ${percent(a.conversion_rate)} conversion by opens`,
      )
      .join("; ");
    const sig =
      test === null
        ? arms.length > 2
          ? " (not tested: more than two arms)"
          : " (too little data to test)"
        : test.significant
          ? ` (significant at 95%, ${formatP(test.p_value)})`
          : ` (not significant at 95%, ${formatP(test.p_value)})`;
    const verdict =
      top.sends === 0 && next.sends === 0
        ? `${where}: no sends in ${arms.map((a) => a.branch).join(" or ")} yet.`
        : `${where}: open rate by users (명) ${byUsers}; ${
            tie
              ? `${top.branch} and ${next.branch} tie${test === null ? "" : ` (${formatP(test.p_value)})`}`
              : `${top.branch} leads${sig}`
          }. Per send (건): ${bySends}.`;
    out.push({
      parent,
      arms: arms.map(({ branch, sends, open_rate, conversion_rate, sendUsers, openUsers }) => ({
        branch,
        sends,
        open_rate,
        conversion_rate,
        send_users: sendUsers,
        open_users: openUsers,
        open_rate_users: round6(ratio(openUsers, sendUsers)),
      })),
      leader: tie || (top.sends === 0 && next.sends === 0) ? null : top.branch,
      metric: "open_rate_users",
      p_value: test?.p_value ?? null,
      significant: test?.significant ?? false,
      verdict,
    });
  }
  return out;
}
