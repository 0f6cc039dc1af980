import { createWorld } from "../../../src/sandbox/world/index.js";
import type {
  CampaignRole,
  CampaignRow,
  SandboxCampaign,
  SandboxTask,
  World,
} from "../../../src/sandbox/world/types.js";

export const NOW = Date.parse("2026-11-20T03:00:00Z");
export const SEED = 42;

let shared: World | undefined;

/** One world per test file: building it takes tens of milliseconds. */
export function world(): World {
  shared ??= createWorld({ seed: SEED, now: NOW });
  return shared;
}

export function campaignWithRole(w: World, role: CampaignRole): SandboxCampaign {
  const campaign = w.campaigns.find((c) => c.role === role);
  if (campaign === undefined) throw new Error(`no ${role} campaign`);
  return campaign;
}

export function taskRows(w: World, task: SandboxTask): CampaignRow[] {
  return task.rounds.flatMap((round) => [...w.roundRows(task, round)]);
}

export const OPEN_EVENTS: Record<string, string> = {
  app_push: "push_opened",
  alimtalk: "alimtalk_button_clicked",
  friendtalk: "friendtalk_button_clicked",
  brand_message: "brandmessage_button_clicked",
  sms: "sms_link_clicked",
  rcs: "rcs_link_clicked",
  email: "email_link_clicked",
};
