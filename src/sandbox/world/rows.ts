import { CHANNEL_PROFILES } from "./channels.js";
import {
  isKrw,
  K_CONTROL,
  K_CONVERSION,
  K_FAILED,
  K_LANDING,
  K_OPEN,
  K_RECEIVED,
  K_SENT,
  RecordSim,
  type RoundPlan,
} from "./records.js";
import type { CampaignRow, Channel, Product } from "./types.js";
import { customerUserIdOf, isUnlinkedUser, platformUserIdOf } from "./users.js";

/**
 * CSV rows of one round (spec 2.4), in file order: each send record's rows, then that record's
 * events. Strings that repeat are built once per round; per row only ids and the conversion
 * payload are concatenated.
 */

export interface RowContext {
  plan: RoundPlan;
  campaignId: string;
  channel: Channel;
  conversionEvent: string;
  products: readonly Product[];
  seed: number;
}

const SDK_VARIANTS = [
  "",
  '{"sdk":"ios","sdk_version":"4.12.1"}',
  '{"sdk":"android","sdk_version":"4.11.0"}',
  '{"sdk":"web","sdk_version":"2.3.0"}',
] as const;

export function* roundRowsOf(context: RowContext): Generator<CampaignRow, void, undefined> {
  const { plan, products, seed } = context;
  const profile = CHANNEL_PROFILES[context.channel];
  const taskId = plan.taskId;
  const scheduledAt = plan.scheduledAt;
  const group = plan.group;
  const channel = plan.channel;
  const openEvent = profile.openEvent;
  const conversionEvent = context.conversionEvent;
  const openProps = `{"campaign_id":"${context.campaignId}","task_id":"${taskId}"}`;
  const landingProps = profile.clickTargets.map(
    (target) =>
      `{"click_target":"${target}","url":"https://shop.example.com/landing/${context.campaignId}?target=${target}"}`,
  );
  const customVariants = [
    "",
    `{"utm_source":"crm","utm_campaign":"${context.campaignId}"}`,
    "",
    `{"coupon_code":"WELCOME10","ab_variant":"${group === "" ? "none" : group}"}`,
  ];
  const failures = profile.failures;
  const sim = new RecordSim(products);
  for (let i = 0; i < plan.records; i++) {
    sim.run(plan, i);
    const platformUserId = isUnlinkedUser(sim.user, seed) ? "" : platformUserIdOf(sim.user);
    const userId = customerUserIdOf(sim.user, seed);
    for (let k = 0; k < sim.count; k++) {
      const kind = sim.kind[k] as number;
      const capturedAt = sim.time[k] as number;
      if (kind <= K_CONTROL) {
        let eventType = "message_sent";
        let errorCode = "";
        let errorMessage = "";
        if (kind === K_RECEIVED) eventType = "message_received";
        else if (kind === K_CONTROL) eventType = "control_assigned";
        else if (kind === K_FAILED) {
          eventType = "message_failed";
          const failure = failures[sim.aux[k] as number];
          errorCode = failure?.[0] ?? "";
          errorMessage = failure?.[1] ?? "";
        } else if (kind !== K_SENT) continue;
        yield {
          task_id: taskId,
          scheduled_at: scheduledAt,
          group,
          event_type: eventType,
          user_id: userId,
          platform_user_id: platformUserId,
          captured_at: capturedAt,
          channel,
          error_code: errorCode,
          error_message: errorMessage,
          event_properties: "{}",
          custom_event_properties: "{}",
          internal_event_properties: "{}",
        };
        continue;
      }
      const variant = sim.variant[k] as number;
      let eventType: string;
      let properties: string;
      if (kind === K_OPEN) {
        eventType = openEvent;
        properties = openProps;
      } else if (kind === K_LANDING) {
        eventType = "landing_clicked";
        properties = landingProps[sim.aux[k] as number] ?? "{}";
      } else if (kind === K_CONVERSION) {
        eventType = conversionEvent;
        const product = products[sim.aux[k] as number];
        const currency = isKrw(sim.currency[k] as number) ? "KRW" : "USD";
        properties = `{"revenue":${sim.amount[k]},"currency":"${currency}","item_ids":["${product?.id ?? ""}"]}`;
      } else continue;
      yield {
        task_id: taskId,
        scheduled_at: scheduledAt,
        group,
        event_type: eventType,
        user_id: userId,
        platform_user_id: platformUserId,
        captured_at: capturedAt,
        channel: "",
        error_code: "",
        error_message: "",
        event_properties: properties,
        custom_event_properties: customVariants[variant] ?? "",
        internal_event_properties: SDK_VARIANTS[(variant + i) & 3] ?? "",
      };
    }
  }
}
