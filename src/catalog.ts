import { readFile } from "node:fs/promises";
import { extname } from "node:path";

/**
 * The caller's product data (CRM_PRODUCT_CATALOG): the service returns product IDs only (spec
 * 1), so names and prices come from here. CSV with a header row, or JSON (an array of objects or
 * an object keyed by ID). Unknown IDs simply stay bare.
 */
export interface CatalogProduct {
  id: string;
  name?: string | undefined;
  price?: number | undefined;
  /** Other short fields of the row (category, brand...), kept as text. */
  extra: Record<string, string>;
}

export interface ProductCatalog {
  readonly size: number;
  get(id: string): CatalogProduct | undefined;
}

const ID_KEYS = ["id", "item_id", "product_id", "itemid", "productid", "sku"];
const NAME_KEYS = ["name", "item_name", "product_name", "title"];
const PRICE_KEYS = ["price", "sale_price", "item_price", "product_price"];
const MAX_EXTRA_FIELDS = 4;

export class CatalogError extends Error {
  override name = "CatalogError";
}

export function catalogFromProducts(products: Iterable<CatalogProduct>): ProductCatalog {
  const byId = new Map<string, CatalogProduct>();
  for (const product of products) byId.set(product.id, product);
  return { size: byId.size, get: (id) => byId.get(id) };
}

export async function loadCatalog(path: string): Promise<ProductCatalog> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new CatalogError(
      `CRM_PRODUCT_CATALOG: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? "error"}).`,
    );
  }
  const records =
    extname(path).toLowerCase() === ".json"
      ? jsonRecords(text, path)
      : await csvRecords(text, path);
  const products: CatalogProduct[] = [];
  for (const record of records) {
    const product = toProduct(record);
    if (product !== undefined) products.push(product);
  }
  return catalogFromProducts(products);
}

function jsonRecords(text: string, path: string): Array<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch {
    throw new CatalogError(`CRM_PRODUCT_CATALOG: ${path} is not valid JSON.`);
  }
  if (Array.isArray(value)) return value.filter(isRecord);
  if (isRecord(value)) {
    return Object.entries(value)
      .filter((entry): entry is [string, Record<string, unknown>] => isRecord(entry[1]))
      .map(([id, record]) => ({ id, ...record }));
  }
  throw new CatalogError(
    `CRM_PRODUCT_CATALOG: ${path} must hold an array or an object of products.`,
  );
}

async function csvRecords(text: string, path: string): Promise<Array<Record<string, unknown>>> {
  // Loaded here, not at start-up: most sessions never read a catalog.
  const { parse } = await import("csv-parse/sync");
  try {
    return parse(text, {
      bom: true,
      columns: (header: string[]) => header.map((h) => h.trim().toLowerCase()),
      skip_empty_lines: true,
      relax_column_count: true,
      trim: true,
    }) as Array<Record<string, unknown>>;
  } catch (error) {
    // csv-parse's message names the line; keep it short, it ends up in a tool result.
    const why = error instanceof Error ? error.message.slice(0, 160) : "parse error";
    throw new CatalogError(`CRM_PRODUCT_CATALOG: ${path} is not valid CSV (${why}).`);
  }
}

function toProduct(record: Record<string, unknown>): CatalogProduct | undefined {
  const lower = new Map(Object.entries(record).map(([k, v]) => [k.toLowerCase(), v]));
  const pick = (keys: string[]) =>
    keys.map((k) => lower.get(k)).find((v) => v !== undefined && v !== "");
  const id = pick(ID_KEYS);
  if (id === undefined || (typeof id !== "string" && typeof id !== "number")) return undefined;
  const name = pick(NAME_KEYS);
  const priceRaw = pick(PRICE_KEYS);
  const price =
    typeof priceRaw === "number" ? priceRaw : Number(String(priceRaw ?? "").replace(/,/g, ""));
  const used = new Set([...ID_KEYS, ...NAME_KEYS, ...PRICE_KEYS]);
  const extra: Record<string, string> = {};
  for (const [key, value] of lower) {
    if (used.has(key) || Object.keys(extra).length >= MAX_EXTRA_FIELDS) continue;
    if (typeof value === "string" || typeof value === "number") {
      const text = String(value);
      if (text !== "" && text.length <= 40) extra[key] = text;
    }
  }
  return {
    id: String(id),
    name: name === undefined ? undefined : String(name),
    price: priceRaw !== undefined && Number.isFinite(price) ? price : undefined,
    extra,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
