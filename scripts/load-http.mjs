#!/usr/bin/env node
/**
 * Load test of `serve --http` (loopback only, bounded): a sandbox process and a server process
 * (the built dist/), then CLIENTS SDK clients (default 50) calling campaign_metrics and
 * check_export in turn for SECONDS (default 60). A single client runs first for BASELINE_SECONDS
 * (default 10), as the baseline of the same run. Prints p50/p99 latency per tool, calls per
 * second, errors, and the server process's RSS at start and its peak (VmHWM).
 *
 *   npm run build && node scripts/load-http.mjs [--clients 50] [--seconds 60] [--baseline-seconds 10]
 *
 * With --pg-outage SECONDS, team mode with a PostgreSQL restart (see runOutage): the ledger,
 * budget, claims and audit trail in a throwaway cluster, which is stopped for that long while
 * the clients run (default 20 of them), then started again.
 *
 *   npm run build && node scripts/load-http.mjs --pg-outage 10 [--clients 20]
 */
import { execFile, spawn } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Agent, fetch as undiciFetch } from "undici";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  const value = i === -1 ? undefined : Number(args[i + 1]);
  if (value !== undefined && !(value > 0)) throw new Error(`--${name} must be a positive number`);
  return value ?? fallback;
};
const PG_OUTAGE = option("pg-outage", 0);
const CLIENTS = Math.min(option("clients", PG_OUTAGE > 0 ? 20 : 50), 200);
const SECONDS = Math.min(option("seconds", 60), 600);
const BASELINE_SECONDS = Math.min(option("baseline-seconds", 10), 120);
const TOKEN = "load-0123456789abcdef0123456789";
const BIN = new URL("../dist/cli.js", import.meta.url).pathname;
/** The text of a call that failed for want of the database (src/ledger/postgres-unavailable.ts). */
const UNAVAILABLE = /database \(export ledger, budget and audit trail\) is unavailable right now/;

function start(argv, env) {
  const child = spawn(process.execPath, [BIN, ...argv], {
    env: { PATH: process.env.PATH ?? "", CRM_LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  let all = "";
  child.stderr.setEncoding("utf8").on("data", (c) => {
    stderr = (stderr + c).slice(-4000);
    all = (all + c).slice(-200_000);
  });
  const first = new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(
      () => reject(new Error(`${argv[0]} did not start: ${stderr}`)),
      30_000,
    );
    child.stdout.setEncoding("utf8").on("data", (c) => {
      out += c;
      if (out.includes("\n")) {
        clearTimeout(timer);
        resolve(JSON.parse(out.split("\n")[0]));
      }
    });
    child.once("exit", (code) => reject(new Error(`${argv[0]} exited ${code}: ${stderr}`)));
  });
  return { child, first, stderrText: () => all };
}

function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN);
  return { rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024 };
}

function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Idle connections closed after 1 s, well before the server's 5-s keep-alive ends: a client
 * starved of CPU must not send a call on a connection the server is closing ("fetch failed").
 */
const agent = new Agent({ keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 });

async function connect(url) {
  const client = new Client({ name: "load", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
      fetch: (input, init) => undiciFetch(input, { ...init, dispatcher: agent }),
    }),
  );
  return client;
}

async function phase(url, clients, seconds, jobId) {
  const latencies = { campaign_metrics: [], check_export: [] };
  let errors = 0;
  const deadline = Date.now() + seconds * 1000;
  const connected = await Promise.all(Array.from({ length: clients }, () => connect(url)));
  await Promise.all(
    connected.map(async (client, index) => {
      let turn = index % 2;
      while (Date.now() < deadline) {
        const name = turn++ % 2 === 0 ? "campaign_metrics" : "check_export";
        const started = performance.now();
        try {
          const result = await client.callTool({
            name,
            arguments:
              name === "campaign_metrics"
                ? {}
                : turn % 4 === 0
                  ? {}
                  : { job_id: jobId, wait_seconds: 0 },
          });
          if (result.isError) errors += 1;
        } catch {
          errors += 1;
        }
        latencies[name].push(performance.now() - started);
      }
    }),
  );
  await Promise.all(connected.map((c) => c.close().catch(() => undefined)));
  return { latencies, errors, seconds };
}

function report(label, result) {
  const all = [...result.latencies.campaign_metrics, ...result.latencies.check_export].sort(
    (a, b) => a - b,
  );
  const line = (name, values) => {
    const sorted = [...values].sort((a, b) => a - b);
    return `  ${name.padEnd(17)} ${String(sorted.length).padStart(6)} calls  p50 ${percentile(sorted, 50).toFixed(1).padStart(7)} ms  p99 ${percentile(sorted, 99).toFixed(1).padStart(7)} ms`;
  };
  console.log(
    `${label}: ${(all.length / result.seconds).toFixed(1)} calls/s, ${result.errors} errors`,
  );
  console.log(line("campaign_metrics", result.latencies.campaign_metrics));
  console.log(line("check_export", result.latencies.check_export));
  console.log(line("all", all));
}

if (PG_OUTAGE > 0) await runOutage();
else await runLoad();
await agent.close();

async function runLoad() {
  const dataDir = mkdtempSync(join(tmpdir(), "crm-load-"));
  const sandbox = start(["sandbox", "--port", "0", "--job-seconds", "1"], {});
  let server;
  try {
    const info = await sandbox.first;
    server = start(["serve", "--http", "--port", "0"], {
      CRM_BASE_URL: info.base_url,
      CRM_REALTIME_BASE_URL: info.realtime_base_url,
      CRM_APPLICATION_ID: info.application_id,
      CRM_SECRET_KEY: info.secret_key,
      CRM_RECOMMEND_SECRET_KEY: info.recommend_secret_key,
      CRM_DATA_DIR: dataDir,
      CRM_POLL_INTERVAL_SECONDS: "0.5",
      CRM_HTTP_TOKENS: `load:${TOKEN}`,
      CRM_HTTP_MAX_CONCURRENT: String(Math.max(64, CLIENTS + 8)),
    });
    const { url } = await server.first;
    const atStart = memory(server.child.pid);
    // One completed, downloaded job for check_export to look up.
    const setup = await connect(url);
    const today = new Date(Date.now() + 9 * 3600_000);
    const day = (back) => new Date(today.getTime() - back * 86_400_000).toISOString().slice(0, 10);
    const made = await setup.callTool({
      name: "start_export",
      arguments: {
        type: "scenario_daily_metrics",
        scenario_id: info.scenario_ids[0],
        from: day(10),
        to: day(3),
        wait_seconds: 30,
      },
    });
    await setup.close();
    const jobId = made.structuredContent?.job?._id;
    if (made.isError || typeof jobId !== "string") {
      throw new Error(`setup export failed: ${JSON.stringify(made.content)}`);
    }
    console.log(
      `serve --http on loopback; sandbox in its own process; ${CLIENTS} clients for ${SECONDS}s after a 1-client baseline of ${BASELINE_SECONDS}s (Node ${process.version})`,
    );
    report("baseline, 1 client", await phase(url, 1, BASELINE_SECONDS, jobId));
    const afterBaseline = memory(server.child.pid);
    report(`load, ${CLIENTS} clients`, await phase(url, CLIENTS, SECONDS, jobId));
    const end = memory(server.child.pid);
    console.log(
      `server RSS: ${atStart.rssMb.toFixed(0)} MB at start, ${afterBaseline.rssMb.toFixed(0)} MB after the baseline, peak ${end.peakMb.toFixed(0)} MB (VmHWM), ${end.rssMb.toFixed(0)} MB at the end`,
    );
  } finally {
    server?.child.kill("SIGTERM");
    sandbox.child.kill("SIGTERM");
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * A throwaway PostgreSQL cluster (Debian's binaries under /usr/lib/postgresql) in `dir`, on a
 * free loopback port; as root it runs as the `postgres` user, as PostgreSQL requires.
 */
async function startCluster(dir) {
  const run = promisify(execFile);
  const root = "/usr/lib/postgresql";
  const version = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))[0]
    : undefined;
  if (version === undefined) {
    throw new Error(
      `--pg-outage needs PostgreSQL's binaries under ${root} (apt-get install postgresql)`,
    );
  }
  const bin = join(root, version, "bin");
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const id = async (flag) => Number((await run("id", [flag, "postgres"])).stdout.trim());
    chownSync(dir, await id("-u"), await id("-g"));
  }
  chmodSync(dir, 0o700);
  const as = (cmd, argv) =>
    asRoot
      ? run("runuser", ["-u", "postgres", "--", join(bin, cmd), ...argv], { cwd: dir })
      : run(join(bin, cmd), argv, { cwd: dir });
  const port = await new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port: free } = probe.address();
      probe.close(() => resolve(free));
    });
  });
  const data = join(dir, "data");
  await as("initdb", ["-D", data, "-U", "crm", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  const pgCtl = (...argv) => as("pg_ctl", ["-D", data, "-w", "-t", "60", ...argv]);
  const start = () =>
    pgCtl(
      "-l",
      join(dir, "server.log"),
      "-o",
      `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off`,
      "start",
    );
  await start();
  return {
    url: `postgres://crm@127.0.0.1:${port}/postgres`,
    halt: () => pgCtl("-m", "fast", "stop"),
    start,
    stop: () => pgCtl("-m", "immediate", "stop").catch(() => undefined),
  };
}

/**
 * Team mode through a PostgreSQL restart: the server with CRM_DATABASE_URL on a throwaway
 * cluster, the sandbox in this process (its own count of created jobs is the reference),
 * CLIENTS clients: two create export jobs (a new request every 4 s each, each retried until it
 * succeeds; the budget's 10 creations span the outage), the others call campaign_metrics and
 * check_export in turn. At 15 s PostgreSQL is stopped (`pg_ctl stop -m fast`) for PG_OUTAGE
 * seconds, then started; the load goes on for 20 s. Prints calls per second before and after,
 * the failed calls and their texts, how long the server took to answer again, and checks the
 * ledger, the budget and the audit trail against what the clients and the service saw.
 */
async function runOutage() {
  // The sandbox runs in this process: its request log would drown the figures.
  process.env.CRM_LOG_LEVEL = "warn";
  const { startSandbox } = await import(new URL("../dist/sandbox/index.js", import.meta.url).href);
  const pg = (await import("pg")).default;
  const dataDir = mkdtempSync(join(tmpdir(), "crm-load-"));
  // Its own folder: the cluster's user must reach it, and the data folder stays the server's.
  const clusterDir = mkdtempSync(join(tmpdir(), "crm-load-pg-"));
  let cluster;
  let sandbox;
  let server;
  const problems = [];
  try {
    cluster = await startCluster(clusterDir);
    sandbox = await startSandbox({ jobSeconds: 1 });
    server = start(["serve", "--http", "--port", "0"], {
      CRM_BASE_URL: sandbox.base_url,
      CRM_APPLICATION_ID: sandbox.application_id,
      CRM_SECRET_KEY: sandbox.secret_key,
      CRM_RECOMMEND_SECRET_KEY: sandbox.recommend_secret_key,
      CRM_DATA_DIR: dataDir,
      CRM_POLL_INTERVAL_SECONDS: "0.5",
      CRM_DATABASE_URL: cluster.url,
      CRM_HTTP_TOKENS: `load:${TOKEN}`,
      CRM_HTTP_MAX_CONCURRENT: String(Math.max(64, CLIENTS + 8)),
    });
    const { url } = await server.first;
    const day = (back) =>
      new Date(sandbox.world.now + 9 * 3600_000 - back * 86_400_000).toISOString().slice(0, 10);
    const request = (back) => ({
      type: "scenario_daily_metrics",
      scenario_id: sandbox.world.scenarios[0]._id,
      from: day(back + 6),
      to: day(back),
      wait_seconds: 0,
    });
    const createsBefore = sandbox.faults.requestCounts.create_export_job;
    const setup = await connect(url);
    const made = await setup.callTool({
      name: "start_export",
      arguments: { ...request(3), wait_seconds: 30 },
    });
    const jobId = made.structuredContent?.job?._id;
    if (made.isError || typeof jobId !== "string") {
      throw new Error(`setup export failed: ${JSON.stringify(made.content)}`);
    }
    const calls = [];
    const t0 = performance.now();
    const record = (tool, result, thrown) => {
      const text = result?.content?.find((c) => c.type === "text")?.text ?? thrown ?? "";
      calls.push({
        tool,
        at: performance.now() - t0,
        ok: result?.isError !== true && !thrown,
        thrown,
        text,
      });
    };
    const call = async (client, tool, args) => {
      try {
        const result = await client.callTool({ name: tool, arguments: args });
        record(tool, result);
        return result;
      } catch (error) {
        record(tool, undefined, String(error));
        return undefined;
      }
    };
    let stopping = false;
    const clients = await Promise.all(Array.from({ length: CLIENTS }, () => connect(url)));
    clients.push(setup);
    const creators = clients.slice(0, 2).map(async (client, n) => {
      for (let i = 0; !stopping; i += 1) {
        for (;;) {
          const result = await call(client, "start_export", request(10 + 2 * i + n));
          if (result !== undefined && !result.isError) break;
          const text = result?.content?.[0]?.text ?? "";
          if (stopping || !UNAVAILABLE.test(text)) return;
          await sleep(250);
        }
        await sleep(4_000);
      }
    });
    const readers = clients.slice(2, CLIENTS).map(async (client, n) => {
      // A call without an answer (the server gone) ends the client: nothing to measure then.
      for (let turn = n; !stopping && !calls.some((c) => c.thrown); turn += 1) {
        if (turn % 2 === 0) await call(client, "campaign_metrics", {});
        else if (turn % 4 === 1) await call(client, "check_export", {});
        else await call(client, "check_export", { job_id: jobId, wait_seconds: 0 });
      }
    });
    // GET /health reads the budget (writing held writes first): the server's own view.
    const health = [];
    const probe = (async () => {
      while (!stopping) {
        const at = (performance.now() - t0) / 1000;
        const answer = await undiciFetch(new URL("/health", url), { dispatcher: agent }).catch(
          () => undefined,
        );
        await answer?.body?.cancel();
        health.push({ at, ok: answer?.status === 200 });
        await sleep(100);
      }
    })();
    const BEFORE_S = 15;
    const AFTER_S = 20;
    await sleep(BEFORE_S * 1000);
    const stopAt = (performance.now() - t0) / 1000;
    await cluster.halt();
    const stoppedAt = (performance.now() - t0) / 1000;
    await sleep(PG_OUTAGE * 1000);
    const startAt = (performance.now() - t0) / 1000;
    await cluster.start();
    const startedAt = (performance.now() - t0) / 1000;
    await sleep(AFTER_S * 1000);
    stopping = true;
    await Promise.all([...creators, ...readers, probe]);
    const endAt = (performance.now() - t0) / 1000;

    const rate = (from, to) =>
      calls.filter((c) => c.ok && c.at / 1000 >= from && c.at / 1000 < to).length / (to - from);
    const failed = calls.filter((c) => !c.ok);
    const texts = new Map();
    for (const c of failed) {
      const key = c.thrown ? `thrown: ${c.thrown}` : c.text.replace(/^Error in \w+: /, "");
      texts.set(key, (texts.get(key) ?? 0) + 1);
    }
    const byTool = (list) => {
      const counts = new Map();
      for (const c of list) counts.set(c.tool, (counts.get(c.tool) ?? 0) + 1);
      return [...counts].map(([tool, n]) => `${tool} ${n}`).join(", ");
    };
    const ledgerOk = calls.filter(
      (c) => c.ok && c.tool === "check_export" && c.at / 1000 >= startAt,
    );
    const lastFailure = failed.reduce((max, c) => Math.max(max, c.at / 1000), 0);
    const secs = (s) => `${s.toFixed(1)}s`;
    console.log(
      `serve --http in team mode (PostgreSQL ${cluster.url.replace(/^postgres:\/\/[^@]*@/, "")}); sandbox in this process; ${CLIENTS} clients; PostgreSQL stopped at ${secs(stopAt)} (pg_ctl stop -m fast done at ${secs(stoppedAt)}) for ${PG_OUTAGE}s, pg_ctl start at ${secs(startAt)} (accepting at ${secs(startedAt)}), load until ${secs(endAt)} (Node ${process.version})`,
    );
    console.log(
      `calls/s (answered without error): before ${rate(5, stopAt).toFixed(1)} (5s-${secs(stopAt)}), during the outage ${rate(stoppedAt, startedAt).toFixed(1)}, first 5 s after ${rate(startedAt, startedAt + 5).toFixed(1)}, after ${rate(startedAt + 5, endAt).toFixed(1)} (${secs(startedAt + 5)}-${secs(endAt)})`,
    );
    console.log(
      `calls answered: ${calls.length}; failed: ${failed.length} (${byTool(failed) || "none"}), all between ${secs(failed[0]?.at / 1000 || 0)} and ${secs(lastFailure)}`,
    );
    for (const [text, n] of texts) console.log(`  ${n} x ${text}`);
    const firstOk = (ledgerOk[0]?.at ?? Number.NaN) / 1000;
    console.log(
      `recovery: first check_export answered from the database ${secs(firstOk - startAt)} after pg_ctl start was run (${secs(firstOk - startedAt)} after it returned); last failure ${secs(lastFailure - startAt)} after it was run`,
    );
    const down = health.filter((h) => !h.ok);
    const back = health.find((h) => h.ok && h.at >= startAt);
    console.log(
      `GET /health every 0.1 s: 503 from ${secs(down[0]?.at ?? Number.NaN)} to ${secs(down.at(-1)?.at ?? Number.NaN)}; 200 again ${secs((back?.at ?? Number.NaN) - startAt)} after pg_ctl start was run (${secs((back?.at ?? Number.NaN) - startedAt)} after it returned)`,
    );
    const serverLog = server.stderrText();
    for (const line of serverLog.split("\n")) {
      if (/database (unavailable|answers again)|kept in memory|writes lost/.test(line)) {
        console.log(`  server log: ${line.replace(/^\[crm-insights-mcp\] /, "")}`);
      }
    }

    // The invariants: every call answered (no transport error), none failed but for the
    // retryable error, the server alive, the ledger, budget and trail whole.
    if (calls.some((c) => c.thrown)) problems.push("calls failed without an answer");
    const other = failed.filter((c) => !c.thrown && !UNAVAILABLE.test(c.text));
    if (other.length > 0) problems.push(`${other.length} calls failed otherwise`);
    if (server.child.exitCode !== null || server.child.signalCode !== null) {
      problems.push("the server process exited");
    }
    if (/unhandled|uncaught/i.test(serverLog)) problems.push("unhandled error in the server log");
    const check = new pg.Pool({ connectionString: cluster.url, max: 1 });
    try {
      const count = async (sql) => Number((await check.query(sql)).rows[0].n);
      const answered = calls.length + 1;
      const deadline = performance.now() + 30_000;
      let audit = await count("SELECT count(*) AS n FROM crm_audit_calls");
      while (audit < answered && performance.now() < deadline) {
        await sleep(200);
        audit = await count("SELECT count(*) AS n FROM crm_audit_calls");
      }
      const service = sandbox.faults.requestCounts.create_export_job - createsBefore;
      const jobs = await count("SELECT count(*) AS n FROM crm_export_jobs");
      const requests = await count("SELECT count(DISTINCT request_key) AS n FROM crm_export_jobs");
      const budget = await count("SELECT count(*) AS n FROM crm_export_create_calls");
      console.log(
        `ledger: ${jobs} jobs for ${requests} requests; budget counts ${budget}; the service created ${service}; audit records ${audit} for ${answered} answered calls`,
      );
      if (!(jobs === service && requests === service && budget === service)) {
        problems.push("ledger, budget and service disagree");
      }
      if (audit !== answered) problems.push("audit records missing or doubled");
    } finally {
      await check.end();
    }
    if (server.child.exitCode === null && server.child.signalCode === null) {
      const end = memory(server.child.pid);
      console.log(
        `server RSS: peak ${end.peakMb.toFixed(0)} MB (VmHWM), ${end.rssMb.toFixed(0)} MB at the end`,
      );
    } else {
      console.log(`server exited (${server.child.exitCode ?? server.child.signalCode}):`);
      console.log(serverLog.split("\n").slice(-15).join("\n"));
    }
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  } finally {
    server?.child.kill("SIGTERM");
    await sandbox?.close();
    await cluster?.stop();
    rmSync(clusterDir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (problems.length > 0) {
    console.log(`FAILED: ${problems.join("; ")}; the server's log ends:`);
    console.log(server?.stderrText().split("\n").slice(-15).join("\n"));
    process.exitCode = 1;
  } else {
    console.log("ok: no process exited, no call unanswered, ledger, budget and audit trail whole");
  }
}
