import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { loadConfig } from "../../src/config.js";
import { createServer } from "../../src/server.js";

/** tools/list as a client sees it, from a sandbox-mode server on a data folder of its own. */
export async function listedTools(): Promise<Awaited<ReturnType<Client["listTools"]>>["tools"]> {
  const dataDir = await mkdtemp(join(tmpdir(), "crm-listed-tools-"));
  const built = createServer(loadConfig({ CRM_DATA_DIR: dataDir }));
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "test", version: "1.0.0" });
  try {
    await built.server.connect(b);
    await client.connect(a);
    return (await client.listTools()).tools;
  } finally {
    await client.close();
    await built.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
