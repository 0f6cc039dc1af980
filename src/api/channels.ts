/**
 * One vocabulary for channels. Campaign files and metrics name a channel by its code
 * (`app_push`); scenario workbooks by its Korean label (`앱푸시`). Results keep what the file says
 * and add the other, so that one word means one channel across tools. Spec 2.4 and 2.5; the
 * service may add channels ("and others"), which then have no counterpart here.
 */
export const CHANNELS = [
  { code: "app_push", label: "앱푸시" },
  { code: "alimtalk", label: "알림톡" },
  { code: "friendtalk", label: "친구톡" },
  { code: "brand_message", label: "브랜드 메시지" },
  { code: "sms", label: "SMS" },
  { code: "rcs", label: "RCS" },
  { code: "email", label: "이메일" },
] as const;

const byLabel = new Map<string, string>(
  CHANNELS.map((c) => [c.label.replace(/\s+/g, "").toLowerCase(), c.code]),
);

/** The code of a channel named by its Korean label (spaces and case ignored), or null. */
export function channelCodeOf(label: string): string | null {
  return byLabel.get(label.replace(/\s+/g, "").toLowerCase()) ?? null;
}
