import { percent } from "../../format.js";
import type { CampaignRound, CampaignSummary, Comparison } from "../schemas.js";
import { formatP, ratio, round6, twoProportionTest } from "../stats.js";
import { CONTROL_GROUP } from "./columns.js";

/** The A/B readout: each send group against the others, and the control group's lift. */

export interface RoundDerived {
  round: CampaignRound;
  /** received users who opened */
  openedReceived: number;
  /** open users who converted */
  convertedOpeners: number;
  /** received users who converted */
  convertedReceived: number;
  controlUsers: number;
  controlConverted: number;
}

const SEND_GROUPS = "send groups";

/** A verdict is a sentence: our own "send groups" opens it capitalised; file names stay as written. */
function capital(name: string): string {
  return name === SEND_GROUPS ? "Send groups" : name;
}

function verdictText(
  metric: string,
  a: string,
  b: string,
  ra: number,
  rb: number,
  test: ReturnType<typeof twoProportionTest>,
): string {
  if (test === null) return `Not enough data to compare ${metric} of ${a} and ${b}.`;
  if (ra === rb) return `${capital(a)} and ${b} have the same ${metric} (${percent(ra)}).`;
  const [hiName, loName, hiRate, loRate] = ra > rb ? [a, b, ra, rb] : [b, a, rb, ra];
  // "send groups" is a plural subject.
  const has = hiName === SEND_GROUPS ? "have" : "has";
  const subject = capital(hiName);
  return test.significant
    ? `${subject} ${has} a higher ${metric} than ${loName} (${percent(hiRate)} vs ${percent(loRate)}); the difference is significant at 95% (${formatP(test.p_value)}).`
    : `${subject} ${has} a higher ${metric} than ${loName} (${percent(hiRate)} vs ${percent(loRate)}), but the difference is not significant at 95% (${formatP(test.p_value)}).`;
}

function compare(
  metric: Comparison["metric"],
  label: string,
  group: string,
  versus: string,
  x1: number,
  n1: number,
  x2: number,
  n2: number,
): Comparison {
  const test = twoProportionTest(x1, n1, x2, n2);
  const rate = round6(ratio(x1, n1));
  const versusRate = round6(ratio(x2, n2));
  return {
    metric,
    group,
    versus,
    rate,
    versus_rate: versusRate,
    z: test?.z ?? null,
    p_value: test?.p_value ?? null,
    significant: test?.significant ?? false,
    verdict: verdictText(label, group, versus, ratio(x1, n1), ratio(x2, n2), test),
  };
}

export function abReadout(derived: RoundDerived[]): CampaignSummary["ab_test"] {
  const groups = new Map<
    string,
    {
      received: number;
      opened: number;
      openUsers: number;
      convertedOpeners: number;
      convertedReceived: number;
    }
  >();
  let controlAssigned = 0;
  let controlConverted = 0;
  let controlConversionRows = 0;
  for (const d of derived) {
    const name = d.round.group;
    if (name === CONTROL_GROUP) {
      controlAssigned += d.controlUsers;
      controlConverted += d.controlConverted;
      controlConversionRows += d.round.conversions;
      continue;
    }
    if (name === "") continue;
    const g = groups.get(name) ?? {
      received: 0,
      opened: 0,
      openUsers: 0,
      convertedOpeners: 0,
      convertedReceived: 0,
    };
    g.received += d.round.received_users;
    g.opened += d.openedReceived;
    g.openUsers += d.round.open_users;
    g.convertedOpeners += d.convertedOpeners;
    g.convertedReceived += d.convertedReceived;
    groups.set(name, g);
  }
  const names = [...groups.keys()].sort();
  const readouts = names.map((name) => {
    const g = groups.get(name) as NonNullable<ReturnType<typeof groups.get>>;
    return {
      group: name,
      received_users: g.received,
      opened_users: g.opened,
      open_rate_users: round6(ratio(g.opened, g.received)),
      open_users: g.openUsers,
      converted_openers: g.convertedOpeners,
      conversion_rate_by_opens: round6(ratio(g.convertedOpeners, g.openUsers)),
    };
  });
  const comparisons: Comparison[] = [];
  if (names.length >= 2) {
    // With two groups one comparison says it all; with more, each group against the rest.
    const subjects = names.length === 2 ? names.slice(0, 1) : names;
    for (const name of subjects) {
      const g = groups.get(name);
      if (g === undefined) continue;
      const others = names.filter((n) => n !== name);
      const rest = { received: 0, opened: 0, openUsers: 0, convertedOpeners: 0 };
      for (const o of others) {
        const og = groups.get(o);
        if (og === undefined) continue;
        rest.received += og.received;
        rest.opened += og.opened;
        rest.openUsers += og.openUsers;
        rest.convertedOpeners += og.convertedOpeners;
      }
      const versus = others.length === 1 ? (others[0] as string) : "the other groups";
      comparisons.push(
        compare(
          "open_rate",
          "open rate",
          name,
          versus,
          g.opened,
          g.received,
          rest.opened,
          rest.received,
        ),
        compare(
          "conversion_rate",
          "conversion rate by opens",
          name,
          versus,
          g.convertedOpeners,
          g.openUsers,
          rest.convertedOpeners,
          rest.openUsers,
        ),
      );
    }
  }
  let control: CampaignSummary["ab_test"]["control"] = null;
  if (controlAssigned > 0) {
    let receivedAll = 0;
    let convertedAll = 0;
    for (const g of groups.values()) {
      receivedAll += g.received;
      convertedAll += g.convertedReceived;
    }
    // Control users get no message, so they are compared per assigned user with send-group users
    // per received user: the lift of sending at all.
    const c = compare(
      "conversion_rate",
      "conversion rate per user",
      SEND_GROUPS,
      CONTROL_GROUP,
      convertedAll,
      receivedAll,
      controlConverted,
      controlAssigned,
    );
    // Without conversion rows for the control group the file cannot tell how it did (the issue:
    // "the control group where the file has conversions for it"); 0% would be a false reading.
    const comparable = receivedAll > 0 && controlConversionRows > 0;
    control = {
      assigned_users: controlAssigned,
      converted_users: controlConverted,
      conversion_rate: round6(ratio(controlConverted, controlAssigned)),
      send_groups_conversion_rate: round6(ratio(convertedAll, receivedAll)),
      comparison: comparable ? withoutMetric(c) : null,
      note:
        controlConversionRows === 0
          ? `The file holds no conversion rows for the control group (${CONTROL_GROUP}), so it cannot be compared with the send groups.`
          : receivedAll === 0
            ? "No send-group user received a message, so the control group has nothing to be compared with."
            : "Send groups count conversions of users who received a message, the control group those of assigned users; both per user. If the service only exports conversions it credits to an opened message, send groups are favoured and the lift is overstated.",
    };
  }
  return { groups: readouts, comparisons, control };
}

function withoutMetric(c: Comparison): Omit<Comparison, "metric"> {
  const { metric: _metric, ...rest } = c;
  return rest;
}
