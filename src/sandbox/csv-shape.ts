import { mix32 } from "./world/random.js";

/**
 * Shapes of campaign export the sandbox can write besides its own, so the analysis can be tried
 * on files it was not tuned on. The spec (2.4) fixes the columns, not the order of the rows nor
 * what the IDs look like:
 * - `order`: `rounds` (the default: round by round, each send record's rows together),
 *   `time-in-round` (by event time within each task, so its A/B and control groups interleave
 *   row by row) or `time` (by event time across the whole file, so rounds interleave too);
 * - `platformIds`: `sandbox` (`pu_000123`) or `hex24` (24 hex digits, like the service's own IDs);
 * - `customerIds`: `sandbox` (`u_000123`), `email` (e-mail-like) or `empty` (no customer IDs).
 * Every shape holds the same rows: only their order and the spelling of the IDs change, one user
 * keeping one spelling.
 */

export const CSV_ORDERS = ["rounds", "time-in-round", "time"] as const;
export const PLATFORM_ID_SHAPES = ["sandbox", "hex24"] as const;
export const CUSTOMER_ID_SHAPES = ["sandbox", "email", "empty"] as const;

export type CsvRowOrder = (typeof CSV_ORDERS)[number];
export type PlatformIdShape = (typeof PLATFORM_ID_SHAPES)[number];
export type CustomerIdShape = (typeof CUSTOMER_ID_SHAPES)[number];

export interface CsvShape {
  order?: CsvRowOrder;
  platformIds?: PlatformIdShape;
  customerIds?: CustomerIdShape;
}

/** Spells a user ID column's value in another shape; "" stays "". */
export type IdSpeller = (id: string) => string;

const keep: IdSpeller = (id) => id;

/** The number in a sandbox ID (`pu_000123`, `u_000123`), or a hash of any other text. */
function idNumber(id: string): number {
  const at = id.indexOf("_") + 1;
  let n = 0;
  for (let i = at; i < id.length; i++) {
    const d = id.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return hashText(id);
    n = n * 10 + d;
  }
  return at === 0 || at === id.length ? hashText(id) : n;
}

function hashText(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0) + 2 ** 32;
}

const hex8 = (n: number): string => (n >>> 0).toString(16).padStart(8, "0");

/** A 24-hex ID for a number: three 32-bit mixes (distinct numbers practically never collide). */
function hex24(n: number): string {
  const a = mix32(n ^ 0x5eed1);
  const b = mix32(Math.imul(n, 0x9e3779b1) ^ 0x5eed2);
  const c = mix32((n / 2 ** 32) ^ a ^ 0x5eed3);
  return hex8(a) + hex8(b) + hex8(c);
}

const DOMAINS = ["example.com", "example.co.kr", "example.net", "mail.example.org"];

function email(n: number): string {
  return `member${String(n).padStart(6, "0")}@${DOMAINS[n % DOMAINS.length]}`;
}

/** Remembers the last ID spelled: a record's rows come together and repeat its user's IDs. */
function lastOne(spell: (n: number) => string): IdSpeller {
  let lastIn = "";
  let lastOut = "";
  return (id) => {
    if (id === "") return "";
    if (id !== lastIn) {
      lastIn = id;
      lastOut = spell(idNumber(id));
    }
    return lastOut;
  };
}

export function platformIdSpeller(shape: PlatformIdShape | undefined): IdSpeller {
  return shape === "hex24" ? lastOne(hex24) : keep;
}

export function customerIdSpeller(shape: CustomerIdShape | undefined): IdSpeller {
  if (shape === "email") return lastOne(email);
  if (shape === "empty") return () => "";
  return keep;
}

/** True when the shape is the sandbox's own (nothing to change per row). */
export function isDefaultShape(shape: CsvShape | undefined): boolean {
  return (
    (shape?.order ?? "rounds") === "rounds" &&
    (shape?.platformIds ?? "sandbox") === "sandbox" &&
    (shape?.customerIds ?? "sandbox") === "sandbox"
  );
}
