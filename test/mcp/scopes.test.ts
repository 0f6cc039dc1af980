import { describe, expect, it } from "vitest";
import { allows, missingScopes, requestScope, toolScope } from "../../src/mcp/scopes.js";

const call = (name: unknown, id = 1) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: {} },
});

describe("scopes of MCP requests", () => {
  it("maps each tool to the scope the contract gives it", () => {
    expect(toolScope("start_export")).toBe("crm.export");
    expect(toolScope("query_export")).toBe("crm.query");
    for (const tool of [
      "recommend_products",
      "campaign_metrics",
      "check_export",
      "summarize_export",
    ]) {
      expect(toolScope(tool)).toBe("crm.read");
    }
  });

  it("needs crm.read for resources, prompts and completions, nothing for lists and set-up", () => {
    for (const method of ["resources/read", "prompts/get", "completion/complete"]) {
      expect(requestScope({ jsonrpc: "2.0", id: 1, method, params: {} })).toBe("crm.read");
    }
    for (const method of [
      "initialize",
      "ping",
      "tools/list",
      "resources/list",
      "resources/templates/list",
      "prompts/list",
      "logging/setLevel",
      "notifications/initialized",
    ]) {
      expect(requestScope({ jsonrpc: "2.0", id: 1, method })).toBeUndefined();
    }
    // A call without a usable name needs the least scope any tool needs.
    expect(requestScope(call(42))).toBe("crm.read");
    expect(requestScope("not an object")).toBeUndefined();
  });

  it("refuses a batch as a whole when one of its requests lacks a scope", () => {
    const batch = [call("check_export", 1), call("start_export", 2), call("query_export", 3)];
    expect(missingScopes(batch, ["crm.read"])).toEqual(["crm.export", "crm.query"]);
    expect(missingScopes(batch, ["crm.read", "crm.export", "crm.query"])).toEqual([]);
    expect(missingScopes(call("start_export"), ["crm.read", "crm.query"])).toEqual(["crm.export"]);
    expect(missingScopes(call("check_export"), ["crm.query"])).toEqual(["crm.read"]);
  });

  it("allows everything when no scope authorization is in force", () => {
    expect(allows(undefined, "crm.export")).toBe(true);
    expect(allows([], "crm.read")).toBe(false);
    expect(missingScopes(call("start_export"), undefined)).toEqual([]);
  });
});
