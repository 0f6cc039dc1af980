import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.js";
import { createServer } from "../../../src/server.js";
import { type Harness, SANDBOX_NOW, startHarness, toResult } from "../../helpers/tool-harness.js";

/**
 * recommend_products with a slot_key that is not a slot: in sandbox mode the server knows the
 * slots and names them; against a service (here the sandbox over HTTP, as a real one) only its
 * 404 is known, and the text says where the keys are (the console).
 */

let dir: string;
let sandboxMode: { client: Client; close(): Promise<void> };
let service: Harness;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "slot-keys-"));
  // CRM_BASE_URL unset: sandbox mode, the embedded sandbox starts at the first call.
  const built = createServer(loadConfig({ CRM_DATA_DIR: dir, CRM_SANDBOX_NOW: SANDBOX_NOW }));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "test", version: "1.0.0" });
  await built.server.connect(serverSide);
  await client.connect(clientSide);
  sandboxMode = {
    client,
    async close() {
      await client.close();
      await built.close();
    },
  };
  service = await startHarness();
});
afterAll(async () => {
  await sandboxMode?.close();
  await service?.close();
  await rm(dir, { recursive: true, force: true });
});

const recommend = async (client: Client, args: Record<string, unknown>) =>
  toResult(await client.callTool({ name: "recommend_products", arguments: args }));

describe("an unknown slot_key", () => {
  it("sandbox mode: refused before the service is asked, naming the keys there are", async () => {
    const r = await recommend(sandboxMode.client, { slot_key: "main_personal" });
    expect(r.isError).toBe(true);
    expect(r.text).toContain(
      'Error in recommend_products: invalid input (slot_key). No recommendation slot has the key "main_personal". Active slot keys: "home_personalized", "pdp_co_viewed", "pdp_similar", "best_sellers", "new_arrivals_warming". Not active (recommend answers 404 for them): "summer_banner_old", "cart_cross_sell_draft". Nothing was sent to the service; correct the input and call again.',
    );
    // A key it names answers.
    const named = await recommend(sandboxMode.client, { slot_key: "best_sellers", limit: 3 });
    expect(named.isError, named.text).toBeFalsy();
    expect(named.structured.item_ids).toHaveLength(3);
  });

  it("sandbox mode: the key given is escaped and cut", async () => {
    const hostile = `x"\u001b[2J\n${"k".repeat(500)}`;
    const r = await recommend(sandboxMode.client, { slot_key: hostile });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('No recommendation slot has the key "x\\"\\u001b[2J\\nkkk');
    expect(r.text).not.toContain("\u001b");
    expect(r.text).not.toContain("k".repeat(100));
    expect(r.text).toContain('Active slot keys: "home_personalized"');
  });

  it("sandbox mode: a slot that exists but is not active is the service's to answer (404)", async () => {
    const r = await recommend(sandboxMode.client, { slot_key: "summer_banner_old" });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("no active recommendation slot matches this slot_key");
    expect(r.text).not.toContain("invalid input");
  });

  it("against a service: its 404, and where the keys are", async () => {
    const before = service.sandbox.faults.requestCounts.recommend;
    const r = await service.call("recommend_products", { slot_key: "main_personal" });
    expect(r.isError).toBe(true);
    expect(service.sandbox.faults.requestCounts.recommend).toBe(before + 1);
    expect(r.text).toContain("no active recommendation slot matches this slot_key");
    expect(r.text).toContain("Check slot_key in the console.");
    expect(r.text).not.toContain("home_personalized");
  });
});
