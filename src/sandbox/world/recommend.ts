import { RECOMMEND_LIMIT, type RecommendBody } from "../spec.js";
import { ACTION_PURCHASE, type Behaviour } from "./behaviour.js";
import { DAY_MS } from "./time.js";
import type { Product, RecommendOutcome, SandboxSlot, SlotKind } from "./types.js";
import { BEHAVIOUR_USERS, userIndexOf } from "./users.js";

/**
 * Recommendation slots and their algorithms (spec 2.1, 4.1) over the behaviour data:
 * - personalized: category and brand affinity of the user's views/carts/purchases (recency
 *   weighted) plus a little popularity; products the user already bought are left out; users
 *   without behaviour (cold) get `popular`.
 * - co_viewed: sessions in which a candidate was viewed together with the reference products;
 *   only products co-viewed at least once.
 * - similar: same category (2) and same brand (1) as a reference, plus price proximity (0..1);
 *   only products sharing the category or brand.
 * - popular: recency-weighted purchases (half-life 30 days).
 * Order: score descending, ties by product id ascending. Reference products never appear.
 */

export const SLOTS: readonly SandboxSlot[] = [
  { key: "home_personalized", state: "active", kind: "personalized", input: "none", warmupMs: 0 },
  { key: "pdp_co_viewed", state: "active", kind: "co_viewed", input: "behavior", warmupMs: 0 },
  { key: "pdp_similar", state: "active", kind: "similar", input: "items", warmupMs: 0 },
  { key: "best_sellers", state: "active", kind: "popular", input: "none", warmupMs: 0 },
  {
    key: "new_arrivals_warming",
    state: "active",
    kind: "popular",
    input: "none",
    warmupMs: 60_000,
  },
  { key: "summer_banner_old", state: "inactive", kind: "popular", input: "none", warmupMs: 0 },
  {
    key: "cart_cross_sell_draft",
    state: "temporary",
    kind: "co_viewed",
    input: "items",
    warmupMs: 0,
  },
];

const KIND_WEIGHT = [1, 3, 5] as const;
const AFFINITY_HALF_LIFE_DAYS = 60;

export class Recommender {
  private readonly indexById = new Map<string, number>();
  private readonly popularOrder: number[];

  constructor(
    private readonly products: readonly Product[],
    private readonly behaviour: Behaviour,
    private readonly now: number,
  ) {
    products.forEach((product, index) => {
      this.indexById.set(product.id, index);
    });
    this.popularOrder = this.rank(behaviour.popularity, new Set(), true);
  }

  recommend(slotKey: string, request: RecommendBody, sinceStartMs: number): RecommendOutcome {
    const slot = SLOTS.find((s) => s.key === slotKey);
    if (slot === undefined || slot.state !== "active") return { status: 404 };
    if (sinceStartMs < slot.warmupMs) return { status: 412 };
    const limit = Math.min(
      RECOMMEND_LIMIT.max,
      Math.max(RECOMMEND_LIMIT.min, Math.floor(request.limit ?? RECOMMEND_LIMIT.default)),
    );
    const offset = Math.max(0, Math.floor(request.offset ?? 0));
    const requested = request.item_ids ?? [];
    const user = this.historyOf(request.platform_user_id);

    let references = requested;
    if (
      references.length === 0 &&
      slot.input === "behavior" &&
      user !== undefined &&
      user.products.length > 0
    ) {
      // Spec 2.1: the most recent product the user acted on becomes the reference.
      references = [this.products[user.products[user.products.length - 1] as number]?.id ?? ""];
    }
    const referenceIndexes = references
      .map((id) => this.indexById.get(id))
      .filter((index): index is number => index !== undefined);
    const exclude = new Set<number>(referenceIndexes);

    let algorithm: string = slot.kind;
    let ranked: number[];
    if (slot.kind === "personalized" && user !== undefined && user.products.length > 0) {
      for (let k = 0; k < user.products.length; k++) {
        if (user.actions[k] === ACTION_PURCHASE) exclude.add(user.products[k] as number);
      }
      ranked = this.rank(this.personalScores(user), exclude, true);
    } else if (slot.kind === "co_viewed" && referenceIndexes.length > 0) {
      ranked = this.rank(this.coViewScores(referenceIndexes), exclude, false);
    } else if (slot.kind === "similar" && referenceIndexes.length > 0) {
      ranked = this.rank(this.similarScores(referenceIndexes), exclude, false);
    } else {
      // popular slots, cold users, and input slots called without any usable reference.
      if (slot.kind !== "popular") algorithm = "popular_fallback";
      ranked = this.popularOrder.filter((index) => !exclude.has(index));
    }
    const narrowed = ranked.filter((index) => {
      const product = this.products[index] as Product;
      return (
        (request.category_id === undefined || product.category_id === request.category_id) &&
        (request.brand_id === undefined || product.brand_id === request.brand_id)
      );
    });
    return {
      status: 200,
      item_ids: narrowed
        .slice(offset, offset + limit)
        .map((index) => (this.products[index] as Product).id),
      metadata: {
        slot_kind: slot.kind satisfies SlotKind,
        algorithm,
        reference_item_ids: references,
        total_candidates: narrowed.length,
      },
    };
  }

  private historyOf(platformUserId: string | undefined): Behaviour["users"][number] | undefined {
    if (platformUserId === undefined) return undefined;
    const index = userIndexOf(platformUserId);
    if (index === undefined || index >= BEHAVIOUR_USERS) return undefined;
    return this.behaviour.users[index];
  }

  /**
   * Product indexes by score descending, ties by id (index order equals id order). With
   * `keepZero` false, products scoring 0 are not candidates.
   */
  private rank(scores: ArrayLike<number>, exclude: Set<number>, keepZero: boolean): number[] {
    const candidates: number[] = [];
    for (let i = 0; i < this.products.length; i++) {
      if (exclude.has(i)) continue;
      if (!keepZero && !((scores[i] ?? 0) > 0)) continue;
      candidates.push(i);
    }
    return candidates.sort((a, b) => (scores[b] ?? 0) - (scores[a] ?? 0) || a - b);
  }

  private personalScores(user: Behaviour["users"][number]): Float64Array {
    const categoryAffinity = new Map<string, number>();
    const brandAffinity = new Map<string, number>();
    let total = 0;
    for (let k = 0; k < user.products.length; k++) {
      const product = this.products[user.products[k] as number] as Product;
      const age = (this.now - (user.times[k] as number)) / DAY_MS;
      const weight =
        (KIND_WEIGHT[user.actions[k] as 0 | 1 | 2] ?? 1) * 0.5 ** (age / AFFINITY_HALF_LIFE_DAYS);
      total += weight;
      categoryAffinity.set(
        product.category_id,
        (categoryAffinity.get(product.category_id) ?? 0) + weight,
      );
      brandAffinity.set(product.brand_id, (brandAffinity.get(product.brand_id) ?? 0) + weight);
    }
    const maxPopularity = Math.max(...this.behaviour.popularity, 1e-9);
    const scores = new Float64Array(this.products.length);
    this.products.forEach((product, i) => {
      const category = (categoryAffinity.get(product.category_id) ?? 0) / total;
      const brand = (brandAffinity.get(product.brand_id) ?? 0) / total;
      const popular = (this.behaviour.popularity[i] ?? 0) / maxPopularity;
      scores[i] = 2 * category + brand + 0.5 * popular;
    });
    return scores;
  }

  private coViewScores(references: readonly number[]): Float64Array {
    const count = this.products.length;
    const scores = new Float64Array(count);
    for (const reference of references) {
      for (let i = 0; i < count; i++) {
        scores[i] = (scores[i] ?? 0) + (this.behaviour.coViews[reference * count + i] ?? 0);
      }
    }
    return scores;
  }

  private similarScores(references: readonly number[]): Float64Array {
    const scores = new Float64Array(this.products.length);
    for (const referenceIndex of references) {
      const reference = this.products[referenceIndex] as Product;
      this.products.forEach((product, i) => {
        const sameCategory = product.category_id === reference.category_id;
        const sameBrand = product.brand_id === reference.brand_id;
        if (!sameCategory && !sameBrand) return;
        const proximity = 1 / (1 + Math.abs(Math.log(product.price / reference.price)));
        scores[i] = (scores[i] ?? 0) + (sameCategory ? 2 : 0) + (sameBrand ? 1 : 0) + proximity;
      });
    }
    return scores;
  }
}
