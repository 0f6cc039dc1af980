import { hash2, mix32 } from "./random.js";

/**
 * Virtual users: a user is only an index in [0, 1,000,000); ids are derived from it and
 * nothing is stored per user. Indexes below BEHAVIOUR_USERS also have shopping behaviour.
 */

export const BEHAVIOUR_USERS = 3000;

const PAD = 1_000_000;

export function platformUserIdOf(index: number): string {
  return `pu_${String(PAD + index).slice(1)}`;
}

/** The customer's own user id; about 5% of users have none linked (empty cell). */
export function customerUserIdOf(index: number, seed: number): string {
  if (mix32(index ^ Math.imul(seed, 0x27d4eb2d)) % 20 === 0) return "";
  return `u_${String(PAD + index).slice(1)}`;
}

/** Index of a `pu_NNNNNN` id, or undefined for anything else. */
export function userIndexOf(platformUserId: string): number | undefined {
  const match = /^pu_(\d{6})$/.exec(platformUserId);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/**
 * About 0.5% of users are known to the sandbox only by the customer's user id: their send records
 * have no linked user, so their rows carry an empty `platform_user_id` (spec 2.4) and a `user_id`.
 * It is a property of the user, so all of a user's rows agree.
 */
export function isUnlinkedUser(index: number, seed: number): boolean {
  return hash2(seed ^ 0x0b1d, index) % 200 === 0 && customerUserIdOf(index, seed) !== "";
}
