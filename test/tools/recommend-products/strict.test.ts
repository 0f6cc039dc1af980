import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, startHarness } from "../../helpers/tool-harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe("recommend_products input and catalog robustness", () => {
  it("rejects an unknown argument by name instead of a silent cold-user answer", async () => {
    const before = h.sandbox.faults.requestCounts.recommend;
    const r = await h.call("recommend_products", {
      slot_key: "home_personalized",
      user_id: "pu_000042",
    });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('unknown argument "user_id"');
    expect(h.sandbox.faults.requestCounts.recommend).toBe(before);
  });

  it("returns the IDs with a warning when the catalog file is broken", async () => {
    const dir = join(h.dataDir, "bad-catalog");
    await mkdir(dir, { recursive: true });
    const json = join(dir, "products.json");
    await writeFile(json, "{ not json");
    for (const path of [json, join(dir, "missing.csv")]) {
      const broken = await startHarness({ sandbox: h.sandbox, env: { CRM_PRODUCT_CATALOG: path } });
      try {
        const r = await broken.call("recommend_products", { slot_key: "best_sellers", limit: 4 });
        expect(r.isError).toBeFalsy();
        const expected = h.sandbox.world.recommend("best_sellers", { limit: 4 }, 1e9);
        expect(expected).toMatchObject({ status: 200 });
        expect(r.structured.item_ids).toEqual((expected as { item_ids: string[] }).item_ids);
        expect(r.structured.products).toBeUndefined();
        const warning = r.structured.warning as string;
        expect(warning).toContain("catalog not loaded");
        expect(warning).toContain(path);
        expect(warning).toContain("CRM_PRODUCT_CATALOG");
        expect(r.text).toContain("catalog not loaded");
      } finally {
        await broken.close();
      }
    }
  });
});
