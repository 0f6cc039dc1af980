import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  Client,
  InMemoryTransport,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { loadHttpSettings } from "../../src/http/http-config.js";
import { startHttpServer } from "../../src/http/http-server.js";
import { createRuntime } from "../../src/runtime.js";
import { createServer } from "../../src/server.js";
import { campaignRows, toCsv } from "../analysis/campaign/fixture.js";
import { toResult } from "../helpers/tool-harness.js";
import { waitUntil } from "../helpers/wait-until.js";

/**
 * MCP roots with CRM_READ_ROOTS=1: a client that offers roots (the `roots` capability and a
 * `roots/list` handler) over stdio's server (createServer with `clientRoots`, as main.ts builds
 * it) can have a file in a root summarized; without the flag, or over HTTP, it cannot. A changed
 * list replaces the old one.
 */

const GOOD = toCsv(campaignRows(2, 5));
const ROWS = campaignRows(2, 5).length - 1;

let dataDir: string;
let rootA: string;
let rootB: string;
let readDir: string;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "crm-roots-data-"));
  rootA = await mkdtemp(join(tmpdir(), "crm-root-a-"));
  rootB = await mkdtemp(join(tmpdir(), "crm-root-b-"));
  readDir = await mkdtemp(join(tmpdir(), "crm-roots-readdir-"));
  for (const folder of [rootA, rootB, readDir]) await writeFile(join(folder, "campaign.csv"), GOOD);
  await writeFile(join(rootA, "not-a-folder.txt"), "x");
});
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  for (const folder of [dataDir, rootA, rootB, readDir]) {
    if (folder !== undefined) await rm(folder, { recursive: true, force: true });
  }
});

/** A client that offers `roots` (file:// URIs or anything else) and counts the lists it gave. */
function rootsClient(roots: { current: string[] }) {
  const client = new Client(
    { name: "roots-test", version: "1.0.0" },
    { capabilities: { roots: { listChanged: true } } },
  );
  const asked = { count: 0 };
  client.setRequestHandler("roots/list", async () => {
    asked.count += 1;
    return { roots: roots.current.map((uri, i) => ({ uri, name: `root ${i}` })) };
  });
  return { client, asked };
}

/** The stdio server of main.ts (clientRoots) in this process, on `env`, and a client on it. */
async function stdioSession(env: Record<string, string>, client: Client) {
  const built = createServer(loadConfig({ CRM_DATA_DIR: dataDir, ...env }), { clientRoots: true });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await built.server.connect(serverSide);
  await client.connect(clientSide);
  closers.push(async () => {
    await client.close();
    await built.close();
  });
  return async (file: string) => {
    const s = toResult(await client.callTool({ name: "summarize_export", arguments: { file } }));
    const q = toResult(
      await client.callTool({
        name: "query_export",
        arguments: { files: [file], sql: "SELECT count(*) FROM events" },
      }),
    );
    return { s, q };
  };
}

const url = (folder: string) => pathToFileURL(folder).href;

describe("MCP roots over stdio", () => {
  it("with CRM_READ_ROOTS=1, a file in a root the client offers is summarized and queried", async () => {
    const { client, asked } = rootsClient({ current: [url(rootA)] });
    const call = await stdioSession({ CRM_READ_ROOTS: "1" }, client);
    const { s, q } = await call(join(rootA, "campaign.csv"));
    expect(s.isError, s.text).toBeFalsy();
    expect(s.structured.rows).toBe(ROWS);
    expect(q.isError, q.text).toBeFalsy();
    expect(q.structured.rows).toEqual([[ROWS]]);
    expect(asked.count).toBeGreaterThanOrEqual(1);
    // Another folder the client does not offer stays closed, and the refusal lists the root.
    const other = await call(join(rootB, "campaign.csv"));
    expect(other.s.isError).toBe(true);
    expect(other.s.text).toContain(
      `is outside the folders summarize_export and query_export read: the data folder (${join(dataDir, "sandbox")}) and the client's MCP roots (${rootA}).`,
    );
  });

  it("without CRM_READ_ROOTS the same client's root is not read, and it is never asked", async () => {
    const { client, asked } = rootsClient({ current: [url(rootA)] });
    const call = await stdioSession({}, client);
    const { s, q } = await call(join(rootA, "campaign.csv"));
    expect(s.isError).toBe(true);
    expect(s.text).toContain(`is outside the data folder (${join(dataDir, "sandbox")})`);
    expect(q.isError).toBe(true);
    expect(q.text).toContain("is outside the data folder");
    expect(asked.count).toBe(0);
  });

  it("a changed list replaces the old one: the new root is read, the one taken back is not", async () => {
    const roots = { current: [url(rootA)] };
    const { client, asked } = rootsClient(roots);
    const call = await stdioSession({ CRM_READ_ROOTS: "1" }, client);
    expect((await call(join(rootA, "campaign.csv"))).s.isError).toBeFalsy();
    const before = asked.count;
    roots.current = [url(rootB)];
    await client.sendRootsListChanged();
    // The server asks again; a call made once it has asked waits for the answer.
    await waitUntil(() => asked.count > before, "the server to list the roots again");
    const now = await call(join(rootB, "campaign.csv"));
    expect(now.s.isError, now.s.text).toBeFalsy();
    expect(now.q.isError, now.q.text).toBeFalsy();
    const taken = await call(join(rootA, "campaign.csv"));
    expect(taken.s.isError).toBe(true);
    expect(taken.s.text).toContain(`the client's MCP roots (${rootB})`);
  });

  it("roots that are not file:// folders are left out; a client without roots is read as none", async () => {
    const { client } = rootsClient({
      current: [
        "https://example.com/exports",
        url(join(rootA, "not-a-folder.txt")),
        url(join(rootA, "never-made")),
        "file://fileserver/share",
        url(rootB),
      ],
    });
    const call = await stdioSession({ CRM_READ_ROOTS: "1" }, client);
    const refused = await call(join(rootA, "campaign.csv"));
    expect(refused.s.isError).toBe(true);
    expect(refused.s.text).toContain(`the client's MCP roots (${rootB}).`);
    expect((await call(join(rootB, "campaign.csv"))).s.isError).toBeFalsy();

    const plain = new Client({ name: "no-roots", version: "1.0.0" });
    const callPlain = await stdioSession({ CRM_READ_ROOTS: "1" }, plain);
    const none = await callPlain(join(rootB, "campaign.csv"));
    expect(none.s.isError).toBe(true);
    expect(none.s.text).toContain(`is outside the data folder (${join(dataDir, "sandbox")})`);
  });
});

describe("a client whose roots/list fails", () => {
  it("gets no root read while it fails, and each file check asks again", async () => {
    const client = new Client(
      { name: "flaky-roots", version: "1.0.0" },
      { capabilities: { roots: { listChanged: true } } },
    );
    let asked = 0;
    client.setRequestHandler("roots/list", async () => {
      asked += 1;
      // The list asked for once the client is initialized, and the next, fail.
      if (asked <= 2) throw new Error("roots not ready");
      return { roots: [{ uri: url(rootA) }] };
    });
    const call = await stdioSession({ CRM_READ_ROOTS: "1" }, client);
    await waitUntil(() => asked === 1, "the list asked for after initialization");
    // summarize_export asks again (the second failure) and reads no root; query_export, after
    // it, asks a third time and reads the file.
    const { s, q } = await call(join(rootA, "campaign.csv"));
    expect(s.isError).toBe(true);
    expect(s.text).toContain(`is outside the data folder (${join(dataDir, "sandbox")})`);
    expect(q.isError, q.text).toBeFalsy();
    expect(q.structured.rows).toEqual([[ROWS]]);
    expect(asked).toBe(3);
  });
});

describe("MCP roots over HTTP (team mode)", () => {
  it("are never asked for nor read, even with CRM_READ_ROOTS=1; CRM_READ_DIRS is", async () => {
    const config = loadConfig({
      CRM_DATA_DIR: dataDir,
      CRM_READ_ROOTS: "1",
      CRM_READ_DIRS: readDir,
    });
    const runtime = createRuntime(config);
    const http = await startHttpServer({
      config,
      settings: loadHttpSettings(["--http", "--port", "0"], {}),
      runtime,
      version: "test",
    });
    // Closing the server closes its runtime too.
    closers.push(() => http.close(1000));
    const { client, asked } = rootsClient({ current: [url(rootA)] });
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
    closers.push(() => client.close());
    const summarize = async (file: string) =>
      toResult(await client.callTool({ name: "summarize_export", arguments: { file } }));
    const inRoot = await summarize(join(rootA, "campaign.csv"));
    expect(inRoot.isError).toBe(true);
    expect(inRoot.text).toContain(
      `the data folder (${join(dataDir, "sandbox")}) and CRM_READ_DIRS (${readDir}).`,
    );
    const listed = await summarize(join(readDir, "campaign.csv"));
    expect(listed.isError, listed.text).toBeFalsy();
    expect(listed.structured.rows).toBe(ROWS);
    expect(asked.count).toBe(0);
  });
});
