import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QueryError, queryFiles } from "../../src/query/index.js";
import { requireInsideFolder } from "../../src/query/sources.js";
import { campaignRows, toCsv } from "../analysis/campaign/fixture.js";

/**
 * Everything that is not one read-only query over the chosen exports is refused, whatever the
 * SQL tries; the next query still runs.
 */

const LIMITS = { memoryMb: 256, threads: 1, timeoutSeconds: 30 };
let dir: string;
let dataFolder: string;
let file: string;
let neighbour: string;
let outside: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "query-refusals-"));
  dataFolder = join(dir, "data");
  await mkdir(join(dataFolder, "exports"), { recursive: true });
  file = join(dataFolder, "exports", "chosen.csv");
  neighbour = join(dataFolder, "exports", "neighbour.csv");
  outside = join(dir, "outside.csv");
  const csv = toCsv(campaignRows(3, 10));
  await writeFile(file, csv);
  await writeFile(neighbour, csv);
  await writeFile(outside, csv);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function run(sql: string, limits = LIMITS) {
  return queryFiles({
    sql,
    files: [{ path: file, jobId: "job-1" }],
    limits,
    maxRows: 100,
    spillParent: dir,
    checkSource: requireInsideFolder(dataFolder),
  });
}

async function failure(sql: string, limits = LIMITS): Promise<QueryError> {
  const error = await run(sql, limits).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, sql).toBeInstanceOf(QueryError);
  return error as QueryError;
}

const REFUSED: [string, string][] = [
  ["read_csv of another file", "SELECT * FROM read_csv('/etc/passwd')"],
  ["read_csv of a file beside the export", `SELECT * FROM read_csv('${"NEIGHBOUR"}')`],
  ["read_text", "SELECT * FROM read_text('/etc/passwd')"],
  ["read_blob", "SELECT * FROM read_blob('/etc/hostname')"],
  ["glob", "SELECT * FROM glob('/etc/*')"],
  ["a URL", "SELECT * FROM read_csv('https://example.com/x.csv')"],
  ["COPY TO", "COPY (SELECT * FROM events) TO 'EXPORT_FILE'"],
  ["COPY TO elsewhere", "COPY (SELECT 1) TO '/tmp/query-refusal-out.csv'"],
  ["ATTACH", "ATTACH '/tmp/query-refusal.duckdb' AS x"],
  ["ATTACH in memory", "ATTACH ':memory:' AS x"],
  ["INSTALL", "INSTALL excel"],
  ["LOAD", "LOAD excel"],
  ["SET", "SET enable_external_access = true"],
  ["SET allowed paths", "SET allowed_paths = ['/etc/passwd']"],
  ["RESET", "RESET lock_configuration"],
  ["PRAGMA", "PRAGMA version"],
  ["PRAGMA database_list", "PRAGMA database_list"],
  ["CALL", "CALL pragma_version()"],
  ["two statements", "SELECT 1; SELECT 2"],
  ["a comment hiding a second statement", "SELECT 1 /* ; */; DROP VIEW events"],
  ["a line comment before a second statement", "SELECT 1 -- first\n; CREATE TABLE t AS SELECT 1"],
  ["CREATE", "CREATE TABLE t AS SELECT * FROM events"],
  ["DROP", "DROP VIEW events"],
  ["INSERT", "INSERT INTO scenario_nodes (number) VALUES (1)"],
  ["EXPLAIN", "EXPLAIN SELECT * FROM events"],
  ["EXPORT DATABASE", "EXPORT DATABASE '/tmp/query-refusal-db'"],
  [
    "a SELECT that would write through query()",
    "SELECT * FROM query('COPY (SELECT 1) TO ''/tmp/q.csv''')",
  ],
];

describe("refused", () => {
  for (const [name, template] of REFUSED) {
    it(name, async () => {
      const sql = template.replace("NEIGHBOUR", neighbour).replace("EXPORT_FILE", file);
      const error = await failure(sql);
      expect(["refused_statement", "sql_error"]).toContain(error.code);
      // The answer never carries the content of a file it was asked to read.
      expect(error.message).not.toMatch(/root:x:0:0/);
    });
  }

  it("names several statements and non-queries as refusals, not as SQL mistakes", async () => {
    expect((await failure("SELECT 1; SELECT 2")).code).toBe("refused_statement");
    expect((await failure("COPY (SELECT 1) TO '/tmp/x.csv'")).code).toBe("refused_statement");
    expect((await failure("SELECT * FROM read_csv('/etc/passwd')")).code).toBe("refused_statement");
    expect((await failure("SELECT * FROM glob('/etc/*')")).message).toContain("Hint:");
  });

  it("wrote nothing, and the export is intact", async () => {
    const result = await run("SELECT count(*) FROM events");
    expect(result.rows).toEqual([[campaignRows(3, 10).length - 1]]);
    const written = ["query-refusal-out.csv", "query-refusal.duckdb", "query-refusal-db", "q.csv"];
    const names = new Set(await readdir("/tmp"));
    expect(written.filter((n) => names.has(n))).toEqual([]);
  });

  it("a file outside the data folder given in files", async () => {
    const error = await queryFiles({
      sql: "SELECT count(*) FROM events",
      files: [{ path: outside, jobId: null }],
      limits: LIMITS,
      maxRows: 10,
      spillParent: dir,
      checkSource: requireInsideFolder(dataFolder),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueryError);
    expect((error as QueryError).code).toBe("outside_data_folder");
  });

  it("a link inside the data folder that points outside it", async () => {
    const { symlink } = await import("node:fs/promises");
    const link = join(dataFolder, "exports", "link.csv");
    await symlink(outside, link);
    const error = await queryFiles({
      sql: "SELECT count(*) FROM events",
      files: [{ path: link, jobId: null }],
      limits: LIMITS,
      maxRows: 10,
      spillParent: dir,
      checkSource: requireInsideFolder(dataFolder),
    }).catch((e: unknown) => e);
    expect((error as QueryError).code).toBe("outside_data_folder");
  });
});

describe("bounded", () => {
  it("stops a query that runs past the timeout, then answers the next one", async () => {
    const error = await failure(
      "SELECT count(*) FROM range(100000000000) t(i) WHERE md5(i::VARCHAR) LIKE 'zzzz%'",
      { ...LIMITS, timeoutSeconds: 1 },
    );
    expect(error.code).toBe("timeout");
    expect(error.message).toContain("1-second limit");
    const next = await run("SELECT count(*) FROM events");
    expect(next.rows[0]?.[0]).toBeGreaterThan(0);
  });

  it("a cancelled call stops its query", async () => {
    const controller = new AbortController();
    const pending = queryFiles({
      sql: "SELECT count(*) FROM range(100000000000) t(i) WHERE md5(i::VARCHAR) LIKE 'zzzz%'",
      files: [{ path: file, jobId: null }],
      limits: LIMITS,
      maxRows: 10,
      spillParent: dir,
      signal: controller.signal,
    });
    // The cancellation under test, meant to land mid-query: the query runs for its full limit.
    setTimeout(() => controller.abort(), 300);
    const error = await pending.catch((e: unknown) => e);
    expect((error as QueryError).code).toBe("cancelled");
  });

  it("a million-row result is capped, counted whole, and never held in memory", async () => {
    let peak = 0;
    const base = process.memoryUsage().heapUsed;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().heapUsed - base);
    }, 5);
    const result = await run(
      "SELECT i, md5(i::VARCHAR) AS a, md5((i + 1)::VARCHAR) AS b FROM range(1000000) t(i)",
    );
    clearInterval(sampler);
    expect(result.rows).toHaveLength(100);
    expect(result.row_count).toBe(1_000_000);
    expect(result.truncated).toBe(true);
    // Holding the million rows as JS values would take a few hundred MB of heap.
    expect(peak).toBeLessThan(100 * 1024 * 1024);
    expect((await run("SELECT 1 AS one")).rows).toEqual([[1]]);
  });

  it("leaves no spill folder behind", async () => {
    await run("SELECT count(*) FROM events");
    expect((await readdir(dir)).filter((n) => n.startsWith("query-spill-"))).toEqual([]);
  });
});
