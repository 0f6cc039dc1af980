import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CatalogError, loadCatalog } from "../../../src/catalog.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "catalog-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("product catalog (CRM_PRODUCT_CATALOG)", () => {
  it("reads a JSON array and a JSON object keyed by ID", async () => {
    const array = join(dir, "a.json");
    await writeFile(
      array,
      JSON.stringify([{ product_id: "P1", title: "후드 티", price: "12,900", brand: "br_1" }]),
    );
    const a = await loadCatalog(array);
    expect(a.get("P1")).toEqual({
      id: "P1",
      name: "후드 티",
      price: 12900,
      extra: { brand: "br_1" },
    });
    const keyed = join(dir, "b.json");
    await writeFile(keyed, JSON.stringify({ P2: { name: "데님", price: 54900 } }));
    const b = await loadCatalog(keyed);
    expect(b.get("P2")?.price).toBe(54900);
    expect(b.get("missing")).toBeUndefined();
  });

  it("reads a CSV with a BOM and quoted commas", async () => {
    const csv = join(dir, "c.csv");
    await writeFile(csv, '\uFEFFID,Name,Price\nP3,"Bag, large",73000\n');
    const c = await loadCatalog(csv);
    expect(c.get("P3")).toMatchObject({ name: "Bag, large", price: 73000 });
  });

  it("names the variable when the file cannot be read", async () => {
    await expect(loadCatalog(join(dir, "none.csv"))).rejects.toThrow(CatalogError);
    await expect(loadCatalog(join(dir, "none.csv"))).rejects.toThrow("CRM_PRODUCT_CATALOG");
  });

  it("reports a malformed CSV as a CatalogError naming the variable and the file", async () => {
    const csv = join(dir, "broken.csv");
    await writeFile(csv, 'id,name\nP1,"unclosed quote\n');
    const failure = loadCatalog(csv);
    await expect(failure).rejects.toThrow(CatalogError);
    await expect(loadCatalog(csv)).rejects.toThrow(`CRM_PRODUCT_CATALOG: ${csv} is not valid CSV`);
  });
});
