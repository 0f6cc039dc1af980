import type { CampaignSummary } from "./schemas.js";

/** What each event type counts as; the codes keep the per-row switch on small integers. */

export type Role = CampaignSummary["event_types"][number]["role"];

export function roleOf(name: string, conversionType: string | undefined): Role {
  switch (name) {
    case "message_sent":
      return "send";
    case "message_received":
      return "receipt";
    case "message_failed":
      return "failure";
    case "control_assigned":
      return "control";
    case "landing_clicked":
      return "click";
  }
  // An explicit choice wins over the suffix rule (a *_clicked type can be the conversion).
  if (conversionType !== undefined && name === conversionType) return "conversion";
  // An unknown channel's open event still counts as an open: the suffix is what marks it.
  if (name.endsWith("_opened") || name.endsWith("_clicked")) return "open";
  if (conversionType === undefined) return "conversion";
  return name === conversionType ? "conversion" : "other";
}

export const ROLE_CODE: Record<Role, number> = {
  send: 0,
  receipt: 1,
  failure: 2,
  control: 3,
  open: 4,
  click: 5,
  conversion: 6,
  other: 7,
};

export const ROLE_NAMES = Object.keys(ROLE_CODE) as Role[];
