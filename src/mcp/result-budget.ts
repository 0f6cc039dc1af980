/**
 * Keeps a tool's structuredContent within a token budget. Some clients (Claude Code) pass the
 * model only structuredContent and cut a tool's output at 25,000 tokens, so a result that grows
 * with the data (rounds of the largest export, 500 campaigns with their tasks) is cut here, in
 * one place, and says what it left out. Lists are already in their meaningful order (rounds by
 * time, campaigns by the requested sort), so the tail is what goes.
 */

/** What a budget left out of one list: `field` is a path such as `campaigns[].tasks`. */
export interface ListCut {
  field: string;
  shown: number;
  total: number;
}

export interface FittedResult {
  value: Record<string, unknown>;
  cuts: ListCut[];
  /** Estimated tokens of the value as returned. */
  tokens: number;
}

/**
 * A conservative token estimate without a tokenizer: JSON of ASCII text runs at about 3.5
 * characters per token; Hangul and other non-ASCII characters are counted a token each (Korean
 * costs more tokens per byte than English).
 */
export function estimateTokens(text: string): number {
  let ascii = 0;
  let other = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) ascii++;
    // A surrogate pair is one character.
    else if (code < 0xdc00 || code > 0xdfff) other++;
  }
  return Math.ceil(ascii / 3.5) + other;
}

const tokensOf = (value: unknown): number => estimateTokens(JSON.stringify(value));

interface ListSite {
  field: string;
  /** Depth in lists: 0 for a list that is not inside another list. */
  depth: number;
  holder: Record<string, unknown>;
  key: string;
  total: number;
}

/**
 * Lists of objects are what grows with the data; lists of numbers or strings are fixed-size
 * figures (24 hours of opens) or short labels, and are kept whole.
 */
function findLists(value: unknown, field: string, depth: number, out: ListSite[]): void {
  if (Array.isArray(value)) {
    for (const item of value) findLists(item, `${field}[]`, depth + 1, out);
    return;
  }
  if (value === null || typeof value !== "object") return;
  for (const [key, child] of Object.entries(value)) {
    const path = field === "" ? key : `${field}.${key}`;
    if (
      Array.isArray(child) &&
      child.length > 0 &&
      child.some((c) => c !== null && typeof c === "object")
    ) {
      out.push({
        field: path,
        depth,
        holder: value as Record<string, unknown>,
        key,
        total: child.length,
      });
    }
    findLists(child, path, depth, out);
  }
}

function sumBy(sites: ListSite[], count: (site: ListSite) => number): Map<string, number> {
  const sums = new Map<string, number>();
  for (const site of sites) sums.set(site.field, (sums.get(site.field) ?? 0) + count(site));
  return sums;
}

/** Lists nested in other lists are cut to at most this many items each, step by step. */
const NESTED_STEPS = [20, 10, 5, 2, 0];

/**
 * Returns the value within `maxTokens`: first lists nested inside list items are shortened
 * (tasks of each campaign), then the largest remaining lists lose their tail, as little as fits.
 * The value is copied, never changed in place.
 */
export function fitToBudget(value: Record<string, unknown>, maxTokens: number): FittedResult {
  const before = tokensOf(value);
  if (before <= maxTokens) return { value, cuts: [], tokens: before };
  const copy = structuredClone(value);
  const sites: ListSite[] = [];
  findLists(copy, "", 0, sites);
  const lengthOf = (site: ListSite) => (site.holder[site.key] as unknown[]).length;
  const cut = (site: ListSite, keep: number) => {
    const list = site.holder[site.key] as unknown[];
    if (list.length > keep) site.holder[site.key] = list.slice(0, keep);
  };

  let tokens = before;
  const nested = sites.filter((s) => s.depth > 0);
  for (const limit of NESTED_STEPS) {
    if (tokens <= maxTokens || nested.length === 0) break;
    for (const site of nested) cut(site, limit);
    tokens = tokensOf(copy);
  }
  // Top-level lists, largest first; each keeps the longest head that fits (binary search).
  const top = sites.filter((s) => s.depth === 0);
  while (tokens > maxTokens) {
    const candidates = top.filter((s) => lengthOf(s) > 0);
    if (candidates.length === 0) break;
    const largest = candidates.reduce((a, b) =>
      tokensOf(a.holder[a.key]) >= tokensOf(b.holder[b.key]) ? a : b,
    );
    const full = largest.holder[largest.key] as unknown[];
    let lo = 0;
    let hi = full.length - 1;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      largest.holder[largest.key] = full.slice(0, mid);
      if (tokensOf(copy) <= maxTokens) lo = mid;
      else hi = mid - 1;
    }
    largest.holder[largest.key] = full.slice(0, lo);
    tokens = tokensOf(copy);
  }
  // Counted again on what is left: items of a cut list take their own lists with them.
  const left: ListSite[] = [];
  findLists(copy, "", 0, left);
  const shown = sumBy(left, (s) => lengthOf(s));
  const cuts = [...sumBy(sites, (s) => s.total)]
    .map(([field, total]) => ({ field, shown: shown.get(field) ?? 0, total }))
    .filter((c) => c.shown < c.total);
  return { value: copy, cuts, tokens };
}
