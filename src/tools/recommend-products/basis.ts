/**
 * What a recommendation was based on, read from the service's metadata. The spec does not show
 * what metadata holds, so this reads tolerantly: a field naming the algorithm or strategy whose
 * value mentions a fallback or popularity (when the slot is not a popularity slot), or a boolean
 * fallback flag; and the reference products the service chose. Anything else says nothing.
 */
export interface RecommendBasis {
  /** True when the service says it fell back (e.g. to popular items). */
  fallback: boolean;
  /** The metadata field and value that said so, e.g. `algorithm = popular_fallback`. */
  evidence?: string;
  /** Reference products the service used that the request did not give (behaviour rule). */
  chosen_references?: string[];
}

const STRATEGY_KEYS = ["algorithm", "strategy", "source", "recommendation_type", "type"];
const FLAG_KEYS = ["fallback", "is_fallback", "used_fallback"];

export function recommendBasis(
  metadata: Record<string, unknown>,
  requestedItems: readonly string[],
): RecommendBasis {
  const basis: RecommendBasis = { fallback: false };
  const slotKind = typeof metadata.slot_kind === "string" ? metadata.slot_kind : undefined;
  for (const key of FLAG_KEYS) {
    if (metadata[key] === true) {
      basis.fallback = true;
      basis.evidence = `${key} = true`;
    }
  }
  for (const key of STRATEGY_KEYS) {
    const value = metadata[key];
    if (basis.fallback || typeof value !== "string") continue;
    const v = value.toLowerCase();
    if (v.includes("fallback") || (v.includes("popular") && slotKind !== "popular")) {
      basis.fallback = true;
      basis.evidence = `${key} = ${value.slice(0, 60)}`;
    }
  }
  const references = metadata.reference_item_ids;
  if (Array.isArray(references) && requestedItems.length === 0) {
    const chosen = references.filter((r): r is string => typeof r === "string" && r !== "");
    if (chosen.length > 0) basis.chosen_references = chosen.slice(0, 20);
  }
  return basis;
}
