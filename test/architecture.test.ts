import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/** House rules of docs/architecture.md that a tool can check. */

const SRC = resolve(import.meta.dirname, "../src");
const FILES = readdirSync(SRC, { recursive: true, encoding: "utf8" })
  .filter((f) => f.endsWith(".ts"))
  .map((f) => join(SRC, f));

/** Static value imports and re-exports (`import type` is erased, so it cannot form a cycle). */
function valueImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const found: string[] = [];
  const statement = /^(?:import|export)\s+(type\s+)?(?:[^"';]*?\sfrom\s+)?["'](\.[^"']+)["']/gms;
  for (const m of text.matchAll(statement)) {
    if (m[1] !== undefined) continue;
    found.push(resolve(dirname(file), m[2] as string).replace(/\.js$/, ".ts"));
  }
  return found;
}

function importCycles(graph: Map<string, string[]>): string[] {
  const cycles: string[] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (node: string) => {
    state.set(node, "open");
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === "open") {
        const cycle = [...path.slice(path.indexOf(next)), next];
        cycles.push(cycle.map((f) => relative(SRC, f)).join(" -> "));
      } else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(node, "done");
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return cycles;
}

describe("module structure", () => {
  it("has no import cycles among the modules of src/", () => {
    const graph = new Map(FILES.map((f) => [f, valueImports(f).filter((d) => FILES.includes(d))]));
    // The parser must see the imports at all, or the check below would pass vacuously.
    expect(graph.get(join(SRC, "server.ts"))).toContain(join(SRC, "tools/register.ts"));
    expect(importCycles(graph)).toEqual([]);
  });

  it("finds a cycle when there is one", () => {
    const [a, b, c] = ["a.ts", "b.ts", "c.ts"].map((f) => join(SRC, f)) as [string, string, string];
    const graph = new Map([
      [a, [b]],
      [b, [c]],
      [c, [a]],
    ]);
    expect(importCycles(graph)).toEqual(["a.ts -> b.ts -> c.ts -> a.ts"]);
  });
});

/** Packages a module imports statically for their values (`import type` is erased). */
function packageImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const statement =
    /^(?:import|export)\s+(type\s+)?(?:[^"';]*?\sfrom\s+)?["']([^."'][^"']*)["']/gms;
  return [...text.matchAll(statement)].filter((m) => m[1] === undefined).map((m) => m[2] as string);
}

describe("cold start", () => {
  it("the server's static module graph never loads DuckDB (loaded on the first query only)", () => {
    const seen = new Set<string>();
    const packages = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file) || !FILES.includes(file)) return;
      seen.add(file);
      for (const name of packageImports(file)) packages.add(name);
      for (const next of valueImports(file)) visit(next);
    };
    visit(join(SRC, "main.ts"));
    visit(join(SRC, "server.ts"));
    // The walk reaches the tools (so a tool importing DuckDB statically would be seen).
    expect(seen.has(join(SRC, "tools/summarize-export.ts"))).toBe(true);
    expect(packages.has("@modelcontextprotocol/server")).toBe(true);
    expect([...packages].filter((p) => p.startsWith("@duckdb/"))).toEqual([]);
  });
});
