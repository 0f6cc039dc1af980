import { z } from "zod";
import {
  RECOMMEND_LIMIT_DEFAULT,
  RECOMMEND_LIMIT_MAX,
  RECOMMEND_LIMIT_MIN,
} from "../../api/limits.js";
import type { RecommendRequest } from "../../api/schemas.js";
import type { ProductCatalog } from "../../catalog.js";
import { formatNumber, moreNotShown, table, truncate } from "../../format.js";
import { log } from "../../log.js";
import { checkInteger, resultBase } from "../../mcp/params.js";
import { defineTool } from "../../mcp/tool.js";
import { ToolInputError } from "../../mcp/tool-errors.js";
import { blankToUndefined } from "../../text-input.js";
import { recommendBasis } from "./basis.js";
import { unknownSlotKey } from "./slot-keys.js";

const TEXT_ROWS = 20;

// Strict: `{"user_id": ...}` must be an error naming the key, not a silent cold-user answer.
const inputSchema = z.strictObject({
  slot_key: z.string().describe("Integration key of an active recommendation slot."),
  platform_user_id: z.string().optional().describe("The service's user ID to personalize for."),
  item_ids: z
    .array(z.string())
    .optional()
    .describe('Reference product IDs (co-viewed/similar slots), e.g. ["P100"].'),
  category_id: z.string().optional().describe("Only this category."),
  brand_id: z.string().optional().describe("Only this brand."),
  limit: z
    .number()
    .meta({ minimum: RECOMMEND_LIMIT_MIN, maximum: RECOMMEND_LIMIT_MAX })
    .optional()
    .describe(
      `${RECOMMEND_LIMIT_MIN} to ${RECOMMEND_LIMIT_MAX} (default ${RECOMMEND_LIMIT_DEFAULT}).`,
    ),
  offset: z.number().meta({ minimum: 0 }).optional().describe("Default 0."),
});

const outputSchema = z.object({
  ...resultBase,
  slot_key: z.string(),
  item_ids: z.array(z.string()).describe("Recommended product IDs in recommendation order."),
  metadata: z
    .record(z.string(), z.unknown())
    .describe("The service's additional information, as returned."),
  products: z
    .array(
      z.object({
        id: z.string(),
        name: z.string().optional(),
        price: z.number().optional(),
        extra: z.record(z.string(), z.string()).optional(),
      }),
    )
    .optional()
    .describe("Names and prices from the product catalog (CRM_PRODUCT_CATALOG), where known."),
  warning: z
    .string()
    .optional()
    .describe("Set when the product catalog could not be loaded; the IDs are still valid."),
  fallback: z
    .boolean()
    .describe("true: the service says it fell back (e.g. to popular items); see basis"),
  basis: z
    .string()
    .optional()
    .describe("what the recommendation was based on, when the metadata tells"),
});

export default defineTool({
  name: "recommend_products",
  title: "Recommend products",
  description: `Recommended product IDs, in order, from an active recommendation slot for a user (platform_user_id) and/or reference products (item_ids); without either, a cold-user answer.
Returns item_ids and metadata, says when the service fell back, and adds names and prices when CRM_PRODUCT_CATALOG is set. Unknown or inactive slot: not found; 412/502: retry later.
Example: recommend_products {"slot_key": "main_personal", "platform_user_id": "u_1001", "limit": 5}`,
  inputSchema,
  outputSchema,
  annotations: { readOnlyHint: true, openWorldHint: true },
  async handler(args, runtime, call) {
    for (const [field, min, max] of [
      ["limit", RECOMMEND_LIMIT_MIN, RECOMMEND_LIMIT_MAX],
      ["offset", 0, undefined],
    ] as const) {
      checkInteger(args[field], field, min, max);
    }
    const slotKey = args.slot_key.trim();
    if (slotKey === "") {
      throw new ToolInputError(
        "slot_key",
        "slot_key must not be empty: give the slot's recommendation integration key.",
      );
    }
    // Where the server knows the slots, an unknown key is refused before the service is asked,
    // with the keys there are; the service's own 404 cannot list them.
    const known = await runtime.knownSlotKeys();
    if (known !== undefined && ![...known.active, ...known.inactive].includes(slotKey)) {
      throw new ToolInputError("slot_key", unknownSlotKey(slotKey, known));
    }
    const body: RecommendRequest = {};
    const user = blankToUndefined(args.platform_user_id);
    if (user !== undefined) body.platform_user_id = user;
    const items = (args.item_ids ?? []).map((i) => i.trim()).filter((i) => i !== "");
    if (items.length > 0) body.item_ids = items;
    const category = blankToUndefined(args.category_id);
    if (category !== undefined) body.category_id = category;
    const brand = blankToUndefined(args.brand_id);
    if (brand !== undefined) body.brand_id = brand;
    if (args.limit !== undefined) body.limit = args.limit;
    if (args.offset !== undefined) body.offset = args.offset;

    const api = await runtime.api();
    const response = await api.recommend(slotKey, body, { signal: call.signal });
    // The catalog only decorates the answer: a broken file must not hide the recommendation.
    let catalog: ProductCatalog | undefined;
    let warning: string | undefined;
    try {
      catalog = await runtime.catalog();
    } catch (error) {
      const why = error instanceof Error ? error.message.replace(/^CRM_PRODUCT_CATALOG: /, "") : "";
      warning = `catalog not loaded: ${why || String(error)} Fix or unset CRM_PRODUCT_CATALOG to get names and prices.`;
      log.warn("product catalog not loaded", { error: why });
    }
    const products = catalog
      ? response.item_ids.map((id) => {
          const p = catalog.get(id);
          return p === undefined ? { id } : { id, name: p.name, price: p.price, extra: p.extra };
        })
      : undefined;
    const target =
      [
        user === undefined ? undefined : `user ${user}`,
        items.length > 0
          ? `${items.length === 1 ? "product" : "products"} ${items.join(", ")}`
          : undefined,
      ]
        .filter((s) => s !== undefined)
        .join(" and ") || "a cold user";
    const basis = recommendBasis(response.metadata, items);
    const basedOn = [
      basis.fallback
        ? `the service fell back to other items (metadata: ${basis.evidence ?? "fallback"}), not the slot's own algorithm`
        : undefined,
      basis.chosen_references === undefined
        ? undefined
        : `reference product chosen by the service from the user's behaviour: ${basis.chosen_references.join(", ")}`,
    ].filter((s) => s !== undefined);
    const summary = `${response.item_ids.length} product(s) ${basis.fallback ? "returned" : "recommended"} by slot ${slotKey} for ${target}${basedOn.length > 0 ? `; ${basedOn.join("; ")}` : ""}.`;
    const lines = [summary];
    if (response.item_ids.length > 0) {
      const shown = response.item_ids.slice(0, TEXT_ROWS);
      if (products !== undefined) {
        lines.push(
          table(
            ["#", "id", "name", "price"],
            shown.map((id, i) => {
              const p = products[i];
              return [
                i + 1 + (args.offset ?? 0),
                id,
                truncate(p?.name ?? "", 40),
                p?.price === undefined ? "" : formatNumber(p.price),
              ];
            }),
          ),
        );
      } else {
        lines.push(shown.join(", "));
      }
      const more = moreNotShown(
        response.item_ids.length,
        shown.length,
        "see structuredContent.item_ids",
      );
      if (more !== "") lines.push(more);
    } else {
      lines.push("The slot returned no products for this input.");
    }
    if (warning !== undefined) lines.push(`Warning: ${warning}`);
    const metadataKeys = Object.keys(response.metadata);
    if (metadataKeys.length > 0)
      lines.push(`metadata: ${truncate(JSON.stringify(response.metadata), 300)}`);
    return {
      structured: {
        summary,
        slot_key: slotKey,
        item_ids: response.item_ids,
        metadata: response.metadata,
        ...(products === undefined ? {} : { products }),
        ...(warning === undefined ? {} : { warning }),
        fallback: basis.fallback,
        ...(basedOn.length > 0 ? { basis: basedOn.join("; ") } : {}),
      },
      text: lines.join("\n"),
    };
  },
});
