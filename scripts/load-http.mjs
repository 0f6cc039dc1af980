#!/usr/bin/env node
/**
 * Load test of `serve --http` (loopback only, bounded): a sandbox process and a server process
 * (the built dist/), then CLIENTS SDK clients (default 50) calling campaign_metrics and
 * check_export in turn for SECONDS (default 60). A single client runs first for BASELINE_SECONDS
 * (default 10), as the baseline of the same run. Prints p50/p99 latency per tool, calls per
 * second, errors, and the server process's RSS at start and its peak (VmHWM).
 *
 *   npm run build && node scripts/load-http.mjs [--clients 50] [--seconds 60] [--baseline-seconds 10]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  const value = i === -1 ? undefined : Number(args[i + 1]);
  if (value !== undefined && !(value > 0)) throw new Error(`--${name} must be a positive number`);
  return value ?? fallback;
};
const CLIENTS = Math.min(option("clients", 50), 200);
const SECONDS = Math.min(option("seconds", 60), 600);
const BASELINE_SECONDS = Math.min(option("baseline-seconds", 10), 120);
const TOKEN = "load-0123456789abcdef0123456789";
const BIN = new URL("../dist/cli.js", import.meta.url).pathname;

function start(argv, env) {
  const child = spawn(process.execPath, [BIN, ...argv], {
    env: { PATH: process.env.PATH ?? "", CRM_LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (c) => {
    stderr = (stderr + c).slice(-4000);
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
  return { child, first };
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

async function connect(url) {
  const client = new Client({ name: "load", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
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
