import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { must } from "../../helpers/must.js";
import { type Harness, startHarness } from "../../helpers/tool-harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe("recommend_products", () => {
  it("returns the slot's IDs in order with metadata, as the world recommends", async () => {
    const user = must(h.sandbox.world.sampleUserIds[0], "sample user id");
    const r = await h.call("recommend_products", {
      slot_key: "home_personalized",
      platform_user_id: user,
      limit: 5,
    });
    expect(r.isError).toBeFalsy();
    const expected = h.sandbox.world.recommend(
      "home_personalized",
      { platform_user_id: user, limit: 5 },
      1e9,
    );
    expect(expected).toMatchObject({ status: 200 });
    expect(r.structured.item_ids).toEqual((expected as { item_ids: string[] }).item_ids);
    expect(r.structured.metadata).toBeTypeOf("object");
    expect(r.text).toContain(`user ${user}`);
  });

  it("says when the service fell back to popular items, and which reference it chose", async () => {
    const fell = await h.call("recommend_products", {
      slot_key: "pdp_similar",
      item_ids: ["no_such_product"],
    });
    expect(fell.isError, fell.text).toBeFalsy();
    expect(fell.structured.fallback).toBe(true);
    expect(fell.structured.summary).toContain("fell back to other items");
    expect(fell.structured.summary).toContain("algorithm = popular_fallback");
    expect(fell.structured.summary).not.toContain("recommended by slot");

    const own = await h.call("recommend_products", { slot_key: "best_sellers" });
    expect(own.structured.fallback).toBe(false);
    expect(own.structured.summary).toContain("recommended by slot best_sellers");

    // A behaviour slot without item_ids: the service picks the user's latest product.
    const user = must(h.sandbox.world.sampleUserIds[0], "sample user id");
    const chosen = await h.call("recommend_products", {
      slot_key: "pdp_co_viewed",
      platform_user_id: user,
    });
    const references = (chosen.structured.metadata as { reference_item_ids: string[] })
      .reference_item_ids;
    expect(references.length).toBe(1);
    expect(chosen.structured.basis).toBe(
      `reference product chosen by the service from the user's behaviour: ${references[0]}`,
    );
  });

  it("passes reference products and enriches IDs from a CSV catalog", async () => {
    const first = h.sandbox.world.products[0];
    const csv = join(h.dataDir, "catalog.csv");
    const rows = h.sandbox.world.products.map((p) => `${p.id},"${p.name}",${p.price}`);
    await writeFile(csv, `item_id,name,price\n${rows.join("\n")}\n`);
    const withCatalog = await startHarness({
      sandbox: h.sandbox,
      env: { CRM_PRODUCT_CATALOG: csv },
    });
    try {
      const r = await withCatalog.call("recommend_products", {
        slot_key: "pdp_similar",
        item_ids: [first?.id],
        limit: 3,
      });
      expect(r.isError).toBeFalsy();
      expect(r.structured.summary).toContain(`for product ${first?.id}.`);
      const products = r.structured.products as Array<{
        id: string;
        name?: string;
        price?: number;
      }>;
      expect(products.length).toBe((r.structured.item_ids as string[]).length);
      for (const p of products) {
        const known = h.sandbox.world.products.find((x) => x.id === p.id);
        expect(p.name).toBe(known?.name);
        expect(p.price).toBe(known?.price);
      }
    } finally {
      await withCatalog.close();
    }
  });

  it("rejects limit and offset out of range before any request", async () => {
    const before = h.sandbox.faults.requestCounts.recommend;
    for (const [args, message] of [
      [{ limit: 0 }, "limit must be a whole number 1 to 1000"],
      [{ limit: 1001 }, "limit must be a whole number 1 to 1000"],
      [{ limit: 2.5 }, "limit must be a whole number"],
      [{ offset: -1 }, "offset must be a whole number 0 or more"],
      [{ slot_key: " " }, "slot_key must not be empty"],
    ] as const) {
      const r = await h.call("recommend_products", { slot_key: "best_sellers", ...args });
      expect(r.isError).toBe(true);
      expect(r.text).toContain(message);
    }
    expect(h.sandbox.faults.requestCounts.recommend).toBe(before);
  });
});

describe("long answers", () => {
  it("shows 20 products and says on its own line how many more are in structuredContent", async () => {
    const user = must(h.sandbox.world.sampleUserIds[0], "sample user id");
    const r = await h.call("recommend_products", {
      slot_key: "home_personalized",
      platform_user_id: user,
      limit: 30,
    });
    expect(r.isError).toBeFalsy();
    const ids = r.structured.item_ids as string[];
    expect(ids.length).toBeGreaterThan(20);
    const lines = r.text.split("\n");
    expect(lines).toContain(`${ids.length - 20} more not shown (see structuredContent.item_ids).`);
    expect(lines).not.toContain("");
  });
});

describe("registration", () => {
  it("gives every tool its title once, in annotations too", async () => {
    const { tools } = await h.client.listTools();
    for (const name of ["recommend_products", "campaign_metrics"]) {
      const tool = tools.find((t) => t.name === name);
      expect(tool?.title, name).toBeTruthy();
      expect(tool?.annotations?.title, name).toBe(tool?.title);
    }
  });

  it("a file not downloaded yet names the exact check_export call", async () => {
    const error = await h.client
      .readResource({ uri: "crm-export://job-unknown" })
      .catch((e: unknown) => e);
    expect(String(error)).toContain('check_export {"job_id":"job-unknown"}');
  });
});
