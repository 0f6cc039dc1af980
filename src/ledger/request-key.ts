import type { ExportType } from "../api/schemas.js";

/**
 * The ledger's `request_key`: what makes two export requests the same job (type, campaign or
 * scenario, and the inclusive dates in the app's zone, empty when open), so an identical request
 * can be answered from the ledger. Built and read only here; the ledger stores it as given.
 */
export interface RequestIdentity {
  type: ExportType;
  targetId: string;
  fromDate?: string | undefined;
  toDate?: string | undefined;
}

const SEPARATOR = "|";

export function requestKey(identity: RequestIdentity): string {
  return [identity.type, identity.targetId, identity.fromDate ?? "", identity.toDate ?? ""].join(
    SEPARATOR,
  );
}

/** The inclusive dates a key was made for (absent where the range was open). */
export function requestKeyDates(key: string): { fromDate?: string; toDate?: string } {
  const [, , fromDate, toDate] = key.split(SEPARATOR);
  return {
    ...(fromDate ? { fromDate } : {}),
    ...(toDate ? { toDate } : {}),
  };
}
