import { describe, expect, it } from "vitest";
import { must } from "../helpers/must.js";
import { client, manualClock, sandboxForFile } from "./support.js";

// Spec 2.1, 2.2, 4.1, 7.1 and the limits of 8.
const clock = manualClock();
const sandbox = await sandboxForFile({ clock: clock.read });
const api = client(sandbox);
const slots = sandbox.world.slots;
const popular = must(
  slots.find((s) => s.state === "active" && s.kind === "popular" && s.warmupMs === 0),
  "active popular slot without a warm-up",
);
const warming = must(
  slots.find((s) => s.state === "active" && s.warmupMs > 0),
  "active slot that warms up",
);

describe("200", () => {
  it("returns item_ids and a metadata object, honouring limit and offset", async () => {
    const key = popular.key;
    const first = await api.recommend(key, { limit: 5 });
    expect(first.status).toBe(200);
    const items = first.body.item_ids as string[];
    expect(items).toHaveLength(5);
    expect(typeof first.body.metadata).toBe("object");
    const known = new Set(sandbox.world.products.map((p) => p.id));
    for (const id of items) expect(known.has(id)).toBe(true);
    // offset 2 continues the same order.
    const shifted = await api.recommend(key, { limit: 3, offset: 2 });
    expect(shifted.body.item_ids).toEqual(items.slice(2, 5));
    // Default limit is 10.
    const plain = await api.recommend(key, {});
    expect((plain.body.item_ids as string[]).length).toBeLessThanOrEqual(10);
    expect((plain.body.item_ids as string[]).slice(0, 5)).toEqual(items);
  });
  it("narrows by category_id", async () => {
    const product = sandbox.world.products[0];
    const res = await api.recommend(popular.key, {
      category_id: product?.category_id,
      limit: 50,
    });
    expect(res.status).toBe(200);
    const byId = new Map(sandbox.world.products.map((p) => [p.id, p]));
    for (const id of res.body.item_ids as string[]) {
      expect(byId.get(id)?.category_id).toBe(product?.category_id);
    }
  });
});

describe("400 on an invalid body (not shown by the spec; documented)", () => {
  it.each([
    ["limit 0", { limit: 0 }],
    ["limit 1001", { limit: 1001 }],
    ["a negative offset", { offset: -1 }],
    ["item_ids not an array", { item_ids: "p1" }],
    ["a numeric user", { platform_user_id: 7 }],
  ])("rejects %s", async (_name, body) => {
    const res = await api.recommend(popular.key, body);
    expect(res.status).toBe(400);
    expect(typeof res.body.message).toBe("string");
  });
  it("rejects a body that is not JSON", async () => {
    expect((await api.recommend(popular.key, "{not json")).status).toBe(400);
    expect((await api.recommend(popular.key, "[1]")).status).toBe(400);
  });
  it("accepts the limits' edges", async () => {
    expect((await api.recommend(popular.key, { limit: 1 })).status).toBe(200);
    expect((await api.recommend(popular.key, { limit: 1000 })).status).toBe(200);
  });
});

describe("404 and 412", () => {
  it("answers 404 for an inactive, a temporarily saved and an unknown slot", async () => {
    const inactive = must(
      slots.find((s) => s.state === "inactive"),
      "inactive slot",
    );
    const temporary = must(
      slots.find((s) => s.state === "temporary"),
      "temporarily saved slot",
    );
    for (const key of [inactive.key, temporary.key, "no_such_slot"]) {
      expect((await api.recommend(key, {})).status).toBe(404);
    }
  });
  it("answers 412 while the slot's cache warms, then 200", async () => {
    const key = warming.key;
    expect((await api.recommend(key, {})).status).toBe(412);
    clock.advance(warming.warmupMs + 1);
    expect((await api.recommend(key, {})).status).toBe(200);
  });
});
