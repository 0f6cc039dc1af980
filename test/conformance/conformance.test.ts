import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { must } from "../helpers/must.js";

/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, its exact version pinned
 * in package.json) against the built bin's `serve --http` in sandbox mode, every server scenario,
 * judged by the suite itself against the committed baseline (expected-failures.yml): a scenario
 * that newly fails, or a listed one that newly passes, fails this test. The suite's own results
 * (one checks.json per scenario) are read too, so a run that did not happen cannot pass.
 */

const BIN = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));
const BASELINE = fileURLToPath(new URL("./expected-failures.yml", import.meta.url));
const SUITE = join(
  dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/conformance/package.json")),
  "dist/index.js",
);

/** Baselined for warnings alone (see expected-failures.yml): they must never fail outright. */
const WARNING_ONLY = new Set(["server-sse-polling", "server-sse-multiple-streams"]);
/** What a baselined scenario may fail on: a fixture of the reference server it names. */
const FIXTURE = /\btest_[a-z0-9_]+\b|test:\/\/|json_schema_2020_12_tool/;
/** resources/subscribe is not offered (see the baseline's reason). */
const NOT_OFFERED = /Method not found/;

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | string;
  errorMessage?: string;
  description?: string;
}

let work: string;
let server: ChildProcess | undefined;
let url: string;

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error("dist/cli.js missing: run npm run build");
  work = await mkdtemp(join(tmpdir(), "crm-conformance-"));
  // Sandbox mode: none of the caller's CRM_* settings reach the server.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("CRM_")),
  );
  const child = spawn(process.execPath, [BIN, "serve", "--http", "--port", "0"], {
    env: { ...env, CRM_DATA_DIR: join(work, "data"), CRM_LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  server = child;
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const line = out.split("\n")[0];
      if (out.includes("\n") && line !== undefined)
        resolve((JSON.parse(line) as { url: string }).url);
    });
    child.once("exit", (code) =>
      reject(new Error(`serve --http exited with ${code} before its first line:\n${stderr}`)),
    );
  });
}, 60_000);

afterAll(async () => {
  if (server !== undefined && server.exitCode === null) {
    const exited = new Promise((resolve) => server?.once("exit", resolve));
    server.kill("SIGTERM");
    await exited;
  }
  if (work !== undefined) await rm(work, { recursive: true, force: true });
}, 30_000);

function run(
  args: string[],
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SUITE, ...args], {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** `server-<scenario>-<ISO time>` -> the scenario's checks. */
async function resultsIn(dir: string): Promise<Map<string, Check[]>> {
  const results = new Map<string, Check[]>();
  for (const entry of await readdir(dir)) {
    const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry)?.[1];
    if (scenario === undefined) throw new Error(`unexpected entry in the results: ${entry}`);
    const checks = JSON.parse(await readFile(join(dir, entry, "checks.json"), "utf8")) as Check[];
    results.set(scenario, checks);
  }
  return results;
}

function problems(checks: Check[], status: string): string[] {
  return checks
    .filter((c) => c.status === status)
    .map((c) => `${c.id}: ${c.errorMessage ?? c.description ?? "(no message)"}`);
}

describe("the official MCP conformance suite", () => {
  it("finds nothing beyond the committed baseline, every scenario run", async () => {
    const baselineText = await readFile(BASELINE, "utf8");
    const baseline = [...baselineText.matchAll(/^\s+-\s+([a-z0-9-]+)\s*$/gm)].flatMap((m) =>
      m[1] === undefined ? [] : [m[1]],
    );
    const resultsDir = join(work, "results");
    const { code, stdout, stderr } = await run(
      [
        "server",
        "--url",
        url,
        "--suite",
        "all",
        "--expected-failures",
        BASELINE,
        "--output-dir",
        resultsDir,
      ],
      work,
    );
    const planned = Number(/Running all suite \((\d+) scenarios\)/.exec(stdout)?.[1] ?? Number.NaN);
    // The suite ran: it announced its scenarios and wrote a result for each of them.
    expect(planned, `the suite did not start:\n${stdout}\n${stderr}`).toBeGreaterThanOrEqual(30);
    const results = await resultsIn(resultsDir);
    expect(results.size, stdout).toBe(planned);

    const failing = [...results]
      .filter(([, checks]) => checks.some((c) => c.status === "FAILURE" || c.status === "WARNING"))
      .map(([scenario]) => scenario);
    // The suite's own verdict against the baseline, with what it found when it disagrees.
    const detail = failing
      .filter((s) => !baseline.includes(s))
      .map((s) => `${s}:\n  ${problems(results.get(s) ?? [], "FAILURE").join("\n  ")}`)
      .join("\n");
    expect({ code, tail: stdout.slice(stdout.lastIndexOf("=== SUMMARY ===")) }).toEqual({
      code: 0,
      tail: expect.stringContaining("Baseline check passed"),
    });
    expect(detail).toBe("");
    expect(failing.sort()).toEqual([...baseline].sort());

    // Each baselined scenario fails only for the reason the baseline gives.
    const checksOf = (scenario: string) => must(results.get(scenario), `result of ${scenario}`);
    for (const scenario of baseline.filter((s) => WARNING_ONLY.has(s))) {
      const checks = checksOf(scenario);
      expect({ scenario, failures: problems(checks, "FAILURE") }).toEqual({
        scenario,
        failures: [],
      });
      expect(problems(checks, "WARNING").length, scenario).toBeGreaterThan(0);
    }
    for (const scenario of baseline.filter((s) => !WARNING_ONLY.has(s))) {
      const failures = problems(checksOf(scenario), "FAILURE");
      expect(failures.length, scenario).toBeGreaterThan(0);
      for (const failure of failures) {
        expect({ scenario, failure }).toEqual({
          scenario,
          failure: expect.stringMatching(
            scenario.startsWith("resources-") && scenario.endsWith("subscribe")
              ? NOT_OFFERED
              : FIXTURE,
          ),
        });
      }
    }
  }, 120_000);

  it("names a reason for every scenario of the baseline", async () => {
    const lines = (await readFile(BASELINE, "utf8")).split("\n");
    const entries = lines.flatMap((line, index) => (/^\s+-\s/.test(line) ? [index] : []));
    expect(entries.length).toBeGreaterThan(0);
    for (const index of entries) {
      // The nearest line above that is not another entry is its comment.
      let above = index - 1;
      while (above >= 0 && /^\s+-\s/.test(must(lines[above], "baseline line"))) above -= 1;
      expect({ entry: lines[index]?.trim(), reason: lines[above]?.trim() }).toEqual({
        entry: lines[index]?.trim(),
        reason: expect.stringMatching(/^#\s*\S/),
      });
    }
  });
});
