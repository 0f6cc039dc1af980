import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { campaignRows, toCsv } from "../analysis/campaign/fixture.js";
import { must } from "../helpers/must.js";
import { toResult } from "../helpers/tool-harness.js";
import { childRunEnv } from "../setup/temp-folder.js";

/**
 * The bin as a user's client starts it (dist/cli.js over stdio, embedded sandbox mode): with
 * CRM_READ_ROOTS=1 a file in a root the client offers is summarized, and one in a folder listed
 * in CRM_READ_DIRS; without the switch the root is refused.
 */

const BIN = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));
const GOOD = toCsv(campaignRows(2, 5));

let dataDir: string;
let root: string;
let downloads: string;
const clients: Client[] = [];

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error("dist/cli.js missing: run npm run build (npm test does)");
  dataDir = await mkdtemp(join(tmpdir(), "crm-roots-stdio-"));
  root = await mkdtemp(join(tmpdir(), "crm-roots-stdio-root-"));
  downloads = await mkdtemp(join(tmpdir(), "crm-roots-stdio-downloads-"));
  await writeFile(join(root, "campaign.csv"), GOOD);
  await writeFile(join(downloads, "campaign.csv"), GOOD);
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  for (const folder of [dataDir, root, downloads]) {
    if (folder !== undefined) await rm(folder, { recursive: true, force: true });
  }
});

/** The bin with `env`, and a client that offers `root` as its one MCP root. */
async function start(env: Record<string, string>): Promise<Client> {
  const client = new Client(
    { name: "roots-stdio", version: "1.0.0" },
    { capabilities: { roots: { listChanged: true } } },
  );
  client.setRequestHandler("roots/list", async () => ({
    roots: [{ uri: pathToFileURL(root).href, name: "project" }],
  }));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN],
    env: {
      PATH: must(process.env.PATH, "PATH"),
      HOME: process.env.HOME ?? "/tmp",
      ...childRunEnv(),
      CRM_DATA_DIR: dataDir,
      CRM_LOG_LEVEL: "warn",
      ...env,
    },
    stderr: "pipe",
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

async function summarize(client: Client, file: string) {
  return toResult(await client.callTool({ name: "summarize_export", arguments: { file } }));
}

describe("the stdio bin with CRM_READ_ROOTS and CRM_READ_DIRS", () => {
  it("reads a file in the client's root and one in CRM_READ_DIRS", async () => {
    const client = await start({ CRM_READ_ROOTS: "1", CRM_READ_DIRS: downloads });
    for (const file of [join(root, "campaign.csv"), join(downloads, "campaign.csv")]) {
      const result = await summarize(client, file);
      expect(result.isError, result.text).toBeFalsy();
      expect(result.structured.file_path).toBe(file);
    }
  });

  it("without CRM_READ_ROOTS refuses the root's file and lists only what it reads", async () => {
    const client = await start({ CRM_READ_DIRS: downloads });
    const result = await summarize(client, join(root, "campaign.csv"));
    expect(result.isError).toBe(true);
    expect(result.text).toContain(
      `read: the data folder (${join(dataDir, "sandbox")}) and CRM_READ_DIRS (${downloads}).`,
    );
  });
});
