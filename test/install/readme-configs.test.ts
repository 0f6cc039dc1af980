import { readFileSync } from "node:fs";
import { posix } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type ClientName, isClientName } from "../../src/install/clients.js";
import { SETTINGS, serverEnv } from "../../src/install/server-entry.js";
import { configSnippet } from "../../src/install/snippet.js";
import { must } from "../helpers/must.js";

/**
 * The README's client configurations are what `install <client> --print` prints for the
 * arguments in the comment above each one, with example paths: made by the same code, so a
 * change to what install writes shows up here. The first configuration shown is the sandbox's.
 */
const README = readFileSync(fileURLToPath(new URL("../../README.md", import.meta.url)), "utf8");
// Joined, so that vitest.config.ts does not take this file for one that runs the built package.
const EXAMPLE = {
  node: "/usr/local/bin/node",
  bin: posix.join("/absolute/path/to/crm-insights-mcp", "dist", "cli.js"),
};
/** README examples write `...` for a key; any valid key prints the same masked placeholder. */
const SOME_KEY = "3a7f9c1e5b2d8f4a6e0b";

interface Example {
  args: string[];
  language: string;
  text: string;
  at: number;
}

function examples(): Example[] {
  const found: Example[] = [];
  const pattern = /<!-- install ([^>]*?) -->\n```(\w+)\n([\s\S]*?)```/g;
  for (const m of README.matchAll(pattern)) {
    found.push({
      args: (m[1] as string).split(/\s+/),
      language: m[2] as string,
      text: m[3] as string,
      at: m.index,
    });
  }
  return found;
}

function printed(args: string[]): string {
  const [client, ...rest] = args;
  if (!isClientName(client)) throw new Error(`README names an unknown client: ${client}`);
  expect(rest[0]).toBe("--print");
  const options = new Map<string, string>();
  for (let i = 1; i < rest.length; i += 2) {
    const option = rest[i] as string;
    const value = rest[i + 1] as string;
    const secret = SETTINGS.find((s) => s.option === option)?.secret === true;
    options.set(option, secret && value === "..." ? SOME_KEY : value);
  }
  const { env } = serverEnv(options, new Map(), {}, "/Users/me");
  return configSnippet(client as ClientName, "crm-insights", EXAMPLE, env, "darwin");
}

describe("the README's client configurations", () => {
  const found = examples();

  it("show every client's format, the sandbox first", () => {
    expect(found.map((e) => e.args[0])).toEqual(["claude-desktop", "vscode", "claude-code"]);
    const section = README.indexOf("## Use it from an assistant");
    const firstConfig = README.indexOf("```json", section);
    expect(found[0]?.args).toEqual(["claude-desktop", "--print"]);
    expect(README.lastIndexOf("<!-- install", firstConfig)).toBe(found[0]?.at);
  });

  it.each(examples())("install $args.0 --print ...: as printed", ({ args, language, text }) => {
    // JSON is compared as data, so the README may lay it out its own way.
    const read = (s: string): unknown => (language === "json" ? JSON.parse(s) : s.trim());
    expect(read(text)).toEqual(read(printed(args)));
  });

  it("the sandbox configuration holds no env at all: nothing to fill in", () => {
    const sandbox = JSON.parse(must(found[0], "sandbox example").text) as {
      mcpServers: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(sandbox.mcpServers["crm-insights"] ?? {})).toEqual(["command", "args"]);
  });
});
