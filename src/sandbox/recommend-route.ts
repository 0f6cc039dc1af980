import { recommendRequestSchema } from "../api/schemas.js";
import { errorReply, type JsonReply, parseJsonObject } from "./http-util.js";
import type { World } from "./world/types.js";

/**
 * Spec 4.1. An invalid body is not shown by the spec; the sandbox answers 400 with a message
 * naming the first bad field (a body that is not a JSON object, a wrong type, `limit` outside
 * 1..1000, a negative `offset`). Unknown fields are ignored.
 */
export function recommend(
  world: World,
  slotKey: string,
  bodyText: string,
  sinceStartMs: number,
): JsonReply {
  const body = bodyText.trim() === "" ? {} : parseJsonObject(bodyText);
  if (body === undefined) return errorReply(400, "The request body must be a JSON object");
  const parsed = recommendRequestSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? "body" : issue.path.join(".");
    return errorReply(400, `Invalid ${where}: ${issue?.message ?? "invalid value"}`);
  }
  const outcome = world.recommend(slotKey, parsed.data, sinceStartMs);
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
