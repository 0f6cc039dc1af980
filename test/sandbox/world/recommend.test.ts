import { describe, expect, it } from "vitest";
import { createBehaviour } from "../../../src/sandbox/world/behaviour.js";
import { createWorld } from "../../../src/sandbox/world/index.js";
import type { Product, RecommendOutcome, SandboxSlot } from "../../../src/sandbox/world/types.js";
import { must } from "../../helpers/must.js";
import { NOW, SEED, world } from "./fixtures.js";

const w = world();
const behaviour = createBehaviour(SEED, NOW, w.products);

function ok(outcome: RecommendOutcome): { item_ids: string[]; metadata: Record<string, unknown> } {
  if (outcome.status !== 200) throw new Error(`status ${outcome.status}`);
  return outcome;
}

function slotOf(predicate: (s: SandboxSlot) => boolean): SandboxSlot {
  const slot = w.slots.find(predicate);
  if (slot === undefined) throw new Error("no such slot");
  return slot;
}

const product = (id: string): Product => {
  const found = w.products.find((p) => p.id === id);
  if (found === undefined) throw new Error(id);
  return found;
};
const userIndex = (id: string) => Number(id.slice(3));

describe("recommend (spec 2.1, 4.1, 7.1)", () => {
  const coViewed = slotOf(
    (s) => s.state === "active" && s.kind === "co_viewed" && s.input === "behavior",
  );
  const similar = slotOf((s) => s.state === "active" && s.kind === "similar");
  const popular = slotOf((s) => s.state === "active" && s.kind === "popular" && s.warmupMs === 0);
  const personal = slotOf((s) => s.state === "active" && s.kind === "personalized");

  it("answers 404 for unknown, inactive and temporarily saved slots", () => {
    expect(w.recommend("no_such_slot", {}, 120_000)).toEqual({ status: 404 });
    const inactive = slotOf((s) => s.state === "inactive");
    const temporary = slotOf((s) => s.state === "temporary");
    expect(w.recommend(inactive.key, {}, 120_000)).toEqual({ status: 404 });
    expect(w.recommend(temporary.key, {}, 120_000)).toEqual({ status: 404 });
  });

  it("answers 412 while a slot's cache warms, then 200", () => {
    const warming = slotOf((s) => s.state === "active" && s.warmupMs === 60_000);
    expect(w.recommend(warming.key, {}, 0)).toEqual({ status: 412 });
    expect(w.recommend(warming.key, {}, 59_999)).toEqual({ status: 412 });
    expect(w.recommend(warming.key, {}, 60_000).status).toBe(200);
  });

  it("ranks popular products by recency-weighted purchases, ties by id", () => {
    const all = ok(w.recommend(popular.key, { limit: 1000 }, 0)).item_ids;
    expect(all).toHaveLength(w.products.length);
    const popularity = (id: string) =>
      must(behaviour.popularity[Number(id.slice(2)) - 1], `popularity of ${id}`);
    for (let k = 1; k < all.length; k++) {
      const a = popularity(all[k - 1] as string);
      const b = popularity(all[k] as string);
      expect(a > b || (a === b && (all[k - 1] as string) < (all[k] as string))).toBe(true);
    }
    expect(ok(w.recommend(popular.key, {}, 0)).item_ids).toEqual(all.slice(0, 10));
  });

  it("pages with limit and offset", () => {
    const all = ok(w.recommend(popular.key, { limit: 1000 }, 0)).item_ids;
    const pages = [0, 7, 14].flatMap(
      (offset) => ok(w.recommend(popular.key, { limit: 7, offset }, 0)).item_ids,
    );
    expect(pages).toEqual(all.slice(0, 21));
    expect(ok(w.recommend(popular.key, { limit: 5, offset: 10_000 }, 0)).item_ids).toEqual([]);
  });

  it("narrows by category and brand", () => {
    const all = ok(w.recommend(popular.key, { limit: 1000 }, 0)).item_ids;
    const category = (w.products[3] as Product).category_id;
    const brand = (w.products[3] as Product).brand_id;
    expect(
      ok(w.recommend(popular.key, { limit: 1000, category_id: category }, 0)).item_ids,
    ).toEqual(all.filter((id) => product(id).category_id === category));
    expect(
      ok(w.recommend(popular.key, { limit: 1000, brand_id: brand, category_id: category }, 0))
        .item_ids,
    ).toEqual(
      all.filter((id) => product(id).category_id === category && product(id).brand_id === brand),
    );
    expect(ok(w.recommend(popular.key, { category_id: "cat_none" }, 0)).item_ids).toEqual([]);
  });

  it("recommends co-viewed products by co-occurrence, excluding the reference", () => {
    const reference = "p_011";
    const r = ok(w.recommend(coViewed.key, { item_ids: [reference], limit: 1000 }, 0));
    const count = w.products.length;
    const expected = w.products
      .map((p, i) => ({
        id: p.id,
        score: must(behaviour.coViews[10 * count + i], `co-views of ${p.id}`),
      }))
      .filter((e) => e.score > 0 && e.id !== reference)
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
      .map((e) => e.id);
    expect(expected.length).toBeGreaterThan(3);
    expect(r.item_ids).toEqual(expected);
    expect(r.metadata).toMatchObject({ slot_kind: "co_viewed", reference_item_ids: [reference] });
  });

  it("uses the user's most recent product when item_ids is empty on a behaviour slot", () => {
    const user = w.sampleUserIds[0] as string;
    const history = behaviour.users[userIndex(user)];
    const latest = history?.products[history.products.length - 1];
    if (latest === undefined) throw new Error("sample user without behaviour");
    const latestId = (w.products[latest] as Product).id;
    const implicit = ok(w.recommend(coViewed.key, { platform_user_id: user, item_ids: [] }, 0));
    const explicit = ok(
      w.recommend(coViewed.key, { platform_user_id: user, item_ids: [latestId] }, 0),
    );
    expect(implicit.metadata.reference_item_ids).toEqual([latestId]);
    expect(implicit.item_ids).toEqual(explicit.item_ids);
    expect(implicit.item_ids).not.toContain(latestId);
    // Without a user there is no reference: the slot falls back to popular products.
    const cold = ok(w.recommend(coViewed.key, {}, 0));
    expect(cold.metadata.algorithm).toBe("popular_fallback");
    expect(cold.item_ids).toEqual(ok(w.recommend(popular.key, {}, 0)).item_ids);
  });

  it("recommends similar products of the same category or brand, closest price first among equals", () => {
    const reference = product("p_045");
    const r = ok(w.recommend(similar.key, { item_ids: [reference.id], limit: 1000 }, 0));
    expect(r.item_ids).not.toContain(reference.id);
    const related = w.products.filter(
      (p) =>
        p.id !== reference.id &&
        (p.category_id === reference.category_id || p.brand_id === reference.brand_id),
    );
    expect(new Set(r.item_ids)).toEqual(new Set(related.map((p) => p.id)));
    const first = product(r.item_ids[0] as string);
    expect(first.category_id).toBe(reference.category_id);
    const sameCategoryOnly = r.item_ids
      .map(product)
      .filter((p) => p.category_id === reference.category_id && p.brand_id !== reference.brand_id);
    const gaps = sameCategoryOnly.map((p) => Math.abs(Math.log(p.price / reference.price)));
    expect(gaps).toEqual([...gaps].sort((a, b) => a - b));
  });

  it("personalizes for known users and falls back to popular for cold users", () => {
    const user = w.sampleUserIds[1] as string;
    const history = behaviour.users[userIndex(user)];
    if (history === undefined) throw new Error("no history");
    const r = ok(w.recommend(personal.key, { platform_user_id: user, limit: 20 }, 0));
    expect(r.metadata.algorithm).toBe("personalized");
    const purchased = new Set(history.products.filter((_, k) => history.actions[k] === 2));
    for (const id of r.item_ids) expect(purchased.has(Number(id.slice(2)) - 1)).toBe(false);
    // The user's most acted-on category leads the list.
    const categories = new Map<string, number>();
    for (const p of history.products) {
      const c = (w.products[p] as Product).category_id;
      categories.set(c, (categories.get(c) ?? 0) + 1);
    }
    const top = r.item_ids.slice(0, 3).map((id) => product(id).category_id);
    expect(top.some((c) => categories.has(c))).toBe(true);
    const cold = ok(w.recommend(personal.key, { platform_user_id: "pu_999999" }, 0));
    expect(cold.metadata.algorithm).toBe("popular_fallback");
    expect(cold.item_ids).toEqual(ok(w.recommend(popular.key, {}, 0)).item_ids);
    expect(ok(w.recommend(personal.key, {}, 0)).item_ids).toEqual(cold.item_ids);
  });

  it("is deterministic: two worlds from the same seed recommend the same", () => {
    const one = createWorld({ seed: SEED, now: NOW });
    const two = createWorld({ seed: SEED, now: NOW });
    const request = { platform_user_id: w.sampleUserIds[2] as string, limit: 30 };
    const first = ok(one.recommend(personal.key, request, 0));
    expect(first.item_ids.length).toBeGreaterThan(0);
    expect(ok(two.recommend(personal.key, request, 0))).toEqual(first);
  });
});
