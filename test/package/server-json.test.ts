import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";

// server.json describes the npm package to the MCP Registry; the registry checks that the
// package's mcpName matches the server's name and that the versions agree.
const read = async (path: string) => readFile(new URL(`../../${path}`, import.meta.url), "utf8");

interface ServerJson {
  name: string;
  description: string;
  version: string;
  packages: Array<{
    registryType: string;
    identifier: string;
    version: string;
    transport: { type: string };
    environmentVariables: Array<{ name: string; isSecret?: boolean; format?: string }>;
  }>;
}

describe("server.json", () => {
  it("matches package.json (name, mcpName, version) and the registry's limits", async () => {
    const server = JSON.parse(await read("server.json")) as ServerJson;
    const pkg = JSON.parse(await read("package.json")) as {
      name: string;
      version: string;
      mcpName: string;
    };
    expect(server.name).toBe(pkg.mcpName);
    expect(server.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    expect(server.description.length).toBeLessThanOrEqual(100);
    expect(server.version).toBe(pkg.version);
    const [npmPackage] = server.packages;
    expect(npmPackage).toMatchObject({
      registryType: "npm",
      identifier: pkg.name,
      version: pkg.version,
      transport: { type: "stdio" },
    });
  });

  it("lists only variables the server reads, keys marked secret", async () => {
    const server = JSON.parse(await read("server.json")) as ServerJson;
    const configSource = await read("src/config.ts");
    const variables = server.packages[0]?.environmentVariables ?? [];
    expect(variables.length).toBeGreaterThan(5);
    for (const v of variables) {
      expect(configSource, v.name).toContain(`"${v.name}"`);
      expect(["string", "number", "boolean", "filepath"]).toContain(v.format ?? "string");
      expect(v.isSecret === true, v.name).toBe(v.name.endsWith("_KEY"));
    }
  });
});
