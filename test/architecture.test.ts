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
    expect(graph.get(join(SRC, "server.ts"))).toContain(join(SRC, "mcp/register.ts"));
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

/**
 * The folders of src/ and the folders each may import (static value imports and dynamic
 * imports; `import type` is erased and is not a dependency at run time). Modules at the top of
 * src/ are either the entry (commands, the server, start-up, the runtime, the library entry) or
 * small utilities that any folder may use. docs/architecture.md draws the same arrows.
 */
const ENTRY = ["main.ts", "server.ts", "startup.ts", "runtime.ts", "index.ts"];
const ALLOWED: Record<string, string[]> = {
  "(cli)": ["*"],
  "(entry)": [
    "tools",
    "mcp",
    "resources",
    "prompts",
    "exports",
    "sandbox",
    "ledger",
    "files",
    "api",
    "analysis",
    "query",
    "report",
    "file-io",
    "audit",
    "history",
  ],
  http: ["(entry)", "mcp", "ledger", "files", "file-io", "api"],
  doctor: ["sandbox", "ledger", "files", "api"],
  install: ["file-io"],
  sync: ["(entry)", "exports", "history", "ledger", "api"],
  audit: ["ledger", "files"],
  tools: [
    "exports",
    "mcp",
    "resources",
    "query",
    "history",
    "analysis",
    "report",
    "ledger",
    "files",
    "api",
  ],
  prompts: ["mcp", "sandbox", "ledger", "api"],
  resources: ["mcp", "exports", "report", "ledger", "files", "api"],
  exports: ["query", "ledger", "files", "file-io", "api"],
  mcp: ["exports", "query", "history", "analysis", "ledger", "files", "file-io", "api"],
  history: ["query", "analysis", "ledger", "files", "file-io", "api"],
  report: ["analysis", "files", "file-io", "api"],
  query: ["analysis", "report", "files", "file-io", "api"],
  files: ["file-io", "api"],
  analysis: ["api"],
  ledger: ["file-io", "api"],
  sandbox: ["file-io", "files", "api"],
  api: ["file-io"],
  "file-io": [],
  "(utility)": ["api"],
};

function folderOf(file: string): string {
  const rel = relative(SRC, file);
  if (rel === "cli.ts") return "(cli)";
  if (!rel.includes("/")) return ENTRY.includes(rel) ? "(entry)" : "(utility)";
  return rel.split("/")[0] as string;
}

/** Value imports as above, plus `import("...")`: a lazily loaded module is still a dependency. */
function runtimeImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const dynamic = [...text.matchAll(/\bimport\(\s*["'](\.[^"']+)["']\s*\)/g)].map((m) =>
    resolve(dirname(file), m[1] as string).replace(/\.js$/, ".ts"),
  );
  return [...valueImports(file), ...dynamic];
}

/** The report view is a browser page built on its own; it shares no module with the server. */
const SERVER_FILES = FILES.filter((f) => !relative(SRC, f).startsWith("report/view/"));

function arrows(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of SERVER_FILES) {
    for (const target of runtimeImports(file)) {
      const from = folderOf(file);
      const to = folderOf(target);
      if (from === to || to === "(utility)") continue;
      const key = `${from} -> ${to}`;
      found.set(key, [...(found.get(key) ?? []), relative(SRC, file)]);
    }
  }
  return found;
}

describe("folders and the arrows between them", () => {
  it("every folder of src/ is in the table", () => {
    const folders = new Set(SERVER_FILES.map(folderOf));
    expect([...folders].filter((f) => !(f in ALLOWED))).toEqual([]);
  });

  it("imports only what the table allows", () => {
    const wrong = [...arrows()]
      .filter(([key]) => {
        const [from, to] = key.split(" -> ") as [string, string];
        const allowed = ALLOWED[from] ?? [];
        return !allowed.includes("*") && !allowed.includes(to);
      })
      .map(([key, files]) => `${key} (${[...new Set(files)].join(", ")})`);
    expect(wrong).toEqual([]);
  });

  it("the table itself has no folder that imports one importing it back", () => {
    const reaches = (from: string, to: string, seen = new Set<string>()): boolean => {
      if (seen.has(from)) return false;
      seen.add(from);
      return (ALLOWED[from] ?? []).some((next) => next === to || reaches(next, to, seen));
    };
    // The utilities may read the service's limits (config defaults); api never imports them back
    // as a folder: utilities are leaves that any folder uses.
    const cycles = Object.keys(ALLOWED).filter(
      (f) => f !== "(cli)" && f !== "(utility)" && reaches(f, f),
    );
    expect(cycles).toEqual([]);
  });

  it("utilities at the top of src/ read only the service's limits from api/", () => {
    const utilities = SERVER_FILES.filter((f) => folderOf(f) === "(utility)");
    const reads = utilities.flatMap((f) =>
      runtimeImports(f)
        .filter((t) => folderOf(t) !== "(utility)")
        .map((t) => `${relative(SRC, f)} -> ${relative(SRC, t)}`),
    );
    expect(reads.filter((r) => !r.endsWith("-> api/limits.ts"))).toEqual([]);
  });

  it("the sandbox is entered only by its door (embedded.ts) and the sandbox command", () => {
    const inside = (f: string) => relative(SRC, f).startsWith("sandbox/");
    const entries = SERVER_FILES.filter((f) => !inside(f)).flatMap((f) =>
      runtimeImports(f)
        .filter(inside)
        .map((t) => `${relative(SRC, f)} -> ${relative(SRC, t)}`),
    );
    expect(entries.length).toBeGreaterThan(0);
    const doors = new Set(["sandbox/embedded.ts", "sandbox/cli.ts"]);
    expect(entries.filter((e) => !doors.has(e.split(" -> ")[1] as string))).toEqual([]);
    expect(entries.filter((e) => e.endsWith("sandbox/cli.ts"))).toEqual([
      "cli.ts -> sandbox/cli.ts",
    ]);
  });

  it("inside the sandbox, only its door reaches the client or the data folder's rules", () => {
    const outward = SERVER_FILES.filter((f) => relative(SRC, f).startsWith("sandbox/")).flatMap(
      (f) =>
        runtimeImports(f)
          .filter((t) => ["api", "files"].includes(folderOf(t)))
          .map(() => relative(SRC, f)),
    );
    expect(new Set(outward)).toEqual(new Set(["sandbox/embedded.ts"]));
  });

  it("the export flow imports nothing of the MCP layer, not even a type", () => {
    const exportsFiles = SERVER_FILES.filter((f) => folderOf(f) === "exports");
    expect(exportsFiles.length).toBeGreaterThan(0);
    const fromMcp = exportsFiles.filter((f) =>
      /^(?:import|export)\s[^;]*?\sfrom\s+["']\.\.\/mcp\//ms.test(readFileSync(f, "utf8")),
    );
    expect(fromMcp.map((f) => relative(SRC, f))).toEqual([]);
  });

  it("finds an arrow the table does not allow", () => {
    // A check that could never fail would pass vacuously: the analysis must not reach the tools.
    expect(ALLOWED.analysis).not.toContain("tools");
    expect(arrows().get("tools -> mcp")?.length).toBeGreaterThan(0);
  });
});

describe("the analysis' rooms", () => {
  const ANALYSIS = join(SRC, "analysis");
  /** Each folder's README.md and the files it must name (i18n's words are named by their folder). */
  const unnamedIn = (folder: string): string[] => {
    const readme = readFileSync(join(ANALYSIS, folder, "README.md"), "utf8");
    return readdirSync(join(ANALYSIS, folder), { withFileTypes: true })
      .filter(
        (e) =>
          e.name !== "README.md" && !readme.includes(`\`${e.name}${e.isDirectory() ? "/" : ""}\``),
      )
      .map((e) => join(folder, e.name));
  };

  it("keep src/analysis to at most 16 entries at its top level", () => {
    expect(readdirSync(ANALYSIS).length).toBeLessThanOrEqual(16);
  });

  it("are each described file by file in a README.md", () => {
    expect(["", "csv", "campaign", "scenario"].flatMap(unnamedIn)).toEqual([]);
  });
});
