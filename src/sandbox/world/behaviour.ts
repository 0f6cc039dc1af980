import { hash2, Rng } from "./random.js";
import { DAY_MS } from "./time.js";
import type { Product } from "./types.js";
import { BEHAVIOUR_USERS } from "./users.js";

/**
 * Shopping behaviour of the first BEHAVIOUR_USERS virtual users over the six months before now:
 * sessions of product views, some carts and purchases. The recommendation algorithms read only
 * the aggregates built here.
 */

export const ACTION_VIEW = 0;
export const ACTION_CART = 1;
export const ACTION_PURCHASE = 2;

export interface UserHistory {
  /** Parallel arrays sorted by time ascending. */
  products: number[];
  times: number[];
  actions: number[];
}

export interface Behaviour {
  users: UserHistory[];
  /** coViews[a * P + b]: sessions in which both a and b were viewed. */
  coViews: Uint32Array;
  /** Recency-weighted purchases (+ a little for carts) per product. */
  popularity: Float64Array;
}

const HALF_LIFE_DAYS = 30;

export function createBehaviour(
  seed: number,
  now: number,
  products: readonly Product[],
): Behaviour {
  const productCount = products.length;
  const byCategory = new Map<string, number[]>();
  products.forEach((product, index) => {
    const list = byCategory.get(product.category_id) ?? [];
    list.push(index);
    byCategory.set(product.category_id, list);
  });
  const categoryLists = [...byCategory.values()];
  const coViews = new Uint32Array(productCount * productCount);
  const popularity = new Float64Array(productCount);
  const users: UserHistory[] = [];
  const rng = new Rng(0);
  for (let u = 0; u < BEHAVIOUR_USERS; u++) {
    rng.reseed(hash2(seed ^ 0xbe4a, u));
    const favourite = rng.pick(categoryLists);
    const second = rng.pick(categoryLists);
    const sessions = 1 + rng.int(10);
    const events: { product: number; time: number; action: number }[] = [];
    for (let s = 0; s < sessions; s++) {
      let time = now - DAY_MS - Math.floor(rng.next() * 179 * DAY_MS);
      const list = rng.chance(0.7) ? favourite : rng.chance(0.6) ? second : rng.pick(categoryLists);
      const views = 2 + rng.int(6);
      const viewed = new Set<number>();
      for (let v = 0; v < views; v++) {
        // Skewed towards the first products of a category: some items are simply more popular.
        const r = rng.next();
        const product = list[Math.floor(r * r * list.length)] as number;
        time += 20_000 + rng.int(240_000);
        events.push({ product, time, action: ACTION_VIEW });
        viewed.add(product);
        if (rng.chance(0.2)) {
          time += 10_000 + rng.int(60_000);
          events.push({ product, time, action: ACTION_CART });
          if (rng.chance(0.45)) {
            time += 30_000 + rng.int(300_000);
            events.push({ product, time, action: ACTION_PURCHASE });
          }
        }
      }
      const distinct = [...viewed];
      for (const a of distinct) {
        for (const b of distinct) {
          if (a !== b) coViews[a * productCount + b] = (coViews[a * productCount + b] ?? 0) + 1;
        }
      }
    }
    events.sort((x, y) => x.time - y.time || x.product - y.product);
    for (const event of events) {
      const age = (now - event.time) / DAY_MS;
      const weight = 0.5 ** (age / HALF_LIFE_DAYS);
      if (event.action === ACTION_PURCHASE)
        popularity[event.product] = (popularity[event.product] ?? 0) + weight;
      else if (event.action === ACTION_CART)
        popularity[event.product] = (popularity[event.product] ?? 0) + 0.2 * weight;
    }
    users.push({
      products: events.map((e) => e.product),
      times: events.map((e) => e.time),
      actions: events.map((e) => e.action),
    });
  }
  return { users, coViews, popularity };
}
