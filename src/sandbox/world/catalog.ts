import { hash2, Rng } from "./random.js";
import type { Product } from "./types.js";

/** Product catalog of the sandbox shop: ~300 products over 10 categories and 24 brands. */

export const PRODUCT_COUNT = 300;

interface CategoryDef {
  id: string;
  nouns: readonly string[];
  /** Price range in KRW; prices end in 900 or 000 like a Korean shop's. */
  minPrice: number;
  maxPrice: number;
}

const CATEGORIES: readonly CategoryDef[] = [
  {
    id: "cat_top",
    nouns: ["코튼 티셔츠", "오버핏 셔츠", "니트 스웨터", "후드 티"],
    minPrice: 19000,
    maxPrice: 89000,
  },
  {
    id: "cat_bottom",
    nouns: ["와이드 슬랙스", "데님 팬츠", "조거 팬츠", "플리츠 스커트"],
    minPrice: 29000,
    maxPrice: 119000,
  },
  {
    id: "cat_outer",
    nouns: ["울 코트", "경량 패딩", "트렌치 코트", "바람막이"],
    minPrice: 69000,
    maxPrice: 349000,
  },
  {
    id: "cat_shoes",
    nouns: ["러닝화", "로퍼", "첼시 부츠", "슬립온"],
    minPrice: 39000,
    maxPrice: 229000,
  },
  {
    id: "cat_bag",
    nouns: ["크로스백", "백팩", "토트백", "미니 파우치"],
    minPrice: 25000,
    maxPrice: 259000,
  },
  {
    id: "cat_beauty",
    nouns: ["수분 크림", "선크림", "립 틴트", "클렌징 폼"],
    minPrice: 9000,
    maxPrice: 59000,
  },
  {
    id: "cat_food",
    nouns: ["그릭 요거트", "견과류 세트", "콜드브루 원액", "닭가슴살 도시락"],
    minPrice: 5000,
    maxPrice: 45000,
  },
  {
    id: "cat_living",
    nouns: ["극세사 이불", "디퓨저", "머그컵 세트", "수납 바스켓"],
    minPrice: 12000,
    maxPrice: 129000,
  },
  {
    id: "cat_digital",
    nouns: ["무선 이어폰", "보조배터리", "스마트워치 밴드", "블루투스 스피커"],
    minPrice: 15000,
    maxPrice: 299000,
  },
  {
    id: "cat_sports",
    nouns: ["요가 매트", "덤벨 세트", "등산 스틱", "스포츠 레깅스"],
    minPrice: 15000,
    maxPrice: 159000,
  },
];

/** Brands with the categories they sell, so brand and category co-occur as in a real shop. */
const BRANDS: readonly { id: string; name: string; categories: readonly number[] }[] = [
  { id: "br_01", name: "무드온", categories: [0, 1] },
  { id: "br_02", name: "데일리핏", categories: [0, 1, 9] },
  { id: "br_03", name: "노스밸리", categories: [2, 3, 9] },
  { id: "br_04", name: "어반클래식", categories: [0, 2] },
  { id: "br_05", name: "스텝업", categories: [3] },
  { id: "br_06", name: "백앤백", categories: [4] },
  { id: "br_07", name: "라온제나", categories: [4, 1] },
  { id: "br_08", name: "수피아", categories: [5] },
  { id: "br_09", name: "글로우랩", categories: [5] },
  { id: "br_10", name: "청정원마켓", categories: [6] },
  { id: "br_11", name: "바른한끼", categories: [6] },
  { id: "br_12", name: "하우스엔", categories: [7] },
  { id: "br_13", name: "포근", categories: [7] },
  { id: "br_14", name: "테크웨이", categories: [8] },
  { id: "br_15", name: "소리담", categories: [8] },
  { id: "br_16", name: "액티브원", categories: [9, 3] },
  { id: "br_17", name: "코지홈", categories: [7, 5] },
  { id: "br_18", name: "모던보이", categories: [0, 1, 2] },
  { id: "br_19", name: "블루오션", categories: [9] },
  { id: "br_20", name: "에코그린", categories: [6, 7] },
  { id: "br_21", name: "시티워커", categories: [3, 4] },
  { id: "br_22", name: "루미에르", categories: [5, 4] },
  { id: "br_23", name: "픽셀", categories: [8] },
  { id: "br_24", name: "온더로드", categories: [2, 9] },
];

const ADJECTIVES = [
  "데일리",
  "프리미엄",
  "베이직",
  "시그니처",
  "에센셜",
  "클래식",
  "라이트",
  "소프트",
];

export function productId(index: number): string {
  return `p_${String(index + 1).padStart(3, "0")}`;
}

export function createCatalog(seed: number): Product[] {
  const rng = new Rng(hash2(seed, 0xca7a));
  const products: Product[] = [];
  for (let i = 0; i < PRODUCT_COUNT; i++) {
    const categoryIndex = i % CATEGORIES.length;
    const category = CATEGORIES[categoryIndex] as CategoryDef;
    const brands = BRANDS.filter((b) => b.categories.includes(categoryIndex));
    const brand = rng.pick(brands);
    const raw = category.minPrice + rng.next() * (category.maxPrice - category.minPrice);
    const price = rng.chance(0.5)
      ? Math.max(1000, Math.round(raw / 1000) * 1000 - 100)
      : Math.round(raw / 1000) * 1000;
    products.push({
      id: productId(i),
      name: `${brand.name} ${rng.pick(ADJECTIVES)} ${rng.pick(category.nouns)}`,
      category_id: category.id,
      brand_id: brand.id,
      price,
    });
  }
  return products;
}
