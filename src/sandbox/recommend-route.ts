import { errorReply, type JsonReply, parseJsonObject } from "./http-util.js";
import { RECOMMEND_LIMIT, type RecommendBody } from "./spec.js";
import type { World } from "./world/types.js";

/**
 * Spec 4.1. An invalid body is not shown by the spec; the sandbox answers 400 with a message
 * naming the first bad field (a body that is not a JSON object, a wrong type, `limit` outside
 * RECOMMEND_LIMIT, a negative `offset`). Unknown fields are ignored.
 */
export function recommend(
  world: World,
  slotKey: string,
  bodyText: string,
  sinceStartMs: number,
): JsonReply {
  const body = bodyText.trim() === "" ? {} : parseJsonObject(bodyText);
  if (body === undefined) return errorReply(400, "The request body must be a JSON object");
  const read = readRecommendBody(body);
  if (typeof read === "string") return errorReply(400, read);
  const outcome = world.recommend(slotKey, read, sinceStartMs);
  switch (outcome.status) {
    case 200:
      return { status: 200, body: { item_ids: outcome.item_ids, metadata: outcome.metadata } };
    case 404:
      return errorReply(404, `No active recommendation slot matches the key ${slotKey}`);
    case 412:
      return errorReply(
        412,
        "The recommendation candidate cache is not ready yet; retry after a short wait.",
      );
  }
}

const TEXT_FIELDS = ["platform_user_id", "category_id", "brand_id"] as const;

/** Section 2.1, field by field; the message names the first field that breaks its rule. */
function readRecommendBody(body: Record<string, unknown>): RecommendBody | string {
  const read: RecommendBody = {};
  for (const field of TEXT_FIELDS) {
    const value = body[field];
    if (value === undefined) continue;
    if (typeof value !== "string" || value === "") {
      return `Invalid ${field}: expected a non-empty string`;
    }
    read[field] = value;
  }
  const itemIds = body.item_ids;
  if (itemIds !== undefined) {
    if (!Array.isArray(itemIds)) return "Invalid item_ids: expected an array of strings";
    const bad = itemIds.findIndex((id) => typeof id !== "string" || id === "");
    if (bad >= 0) return `Invalid item_ids.${bad}: expected a non-empty string`;
    read.item_ids = itemIds as string[];
  }
  const { limit, offset } = body;
  if (limit !== undefined) {
    if (!Number.isInteger(limit)) return "Invalid limit: expected an integer";
    const n = limit as number;
    if (n < RECOMMEND_LIMIT.min || n > RECOMMEND_LIMIT.max) {
      return `Invalid limit: must be between ${RECOMMEND_LIMIT.min} and ${RECOMMEND_LIMIT.max}`;
    }
    read.limit = n;
  }
  if (offset !== undefined) {
    if (!Number.isInteger(offset) || (offset as number) < 0) {
      return "Invalid offset: expected an integer of 0 or more";
    }
    read.offset = offset as number;
  }
  return read;
}
