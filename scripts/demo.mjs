// `npm run demo`: an analyst's conversation with the MCP server, as an assistant would run it.
// Spawns the built server (`node dist/cli.js`) over stdio with the SDK client, in embedded-sandbox
// mode with a temporary data folder, and prints each tool call and what the assistant sees.
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const BIN = new URL("../dist/cli.js", import.meta.url).pathname;
// One pinned "today" for the server's sandbox and the ID lookup below, so both see the same world.
const NOW = new Date().toISOString();
const MAX_LINES = 40;

const rule = (title) => console.log(`\n${"─".repeat(100)}\n${title}\n${"─".repeat(100)}`);

function show(result) {
  const text = result.content
    .map((c) =>
      c.type === "text"
        ? c.text
        : c.type === "resource_link"
          ? `[resource_link ${c.uri} ${c.name}]`
          : `[${c.type}]`,
    )
    .join("\n");
  const lines = text.split("\n");
  console.log(lines.slice(0, MAX_LINES).join("\n"));
  if (lines.length > MAX_LINES) console.log(`… (${lines.length - MAX_LINES} more lines)`);
  if (result.isError) console.log("(isError: true)");
  else if (result.structuredContent?.summary)
    console.log(`\nstructuredContent.summary: ${result.structuredContent.summary}`);
}

async function call(client, say, name, args) {
  rule(`Analyst: ${say}`);
  console.log(`Assistant calls ${name} ${JSON.stringify(args)}\n`);
  const result = await client.callTool(
    { name, arguments: args },
    {
      onprogress: (p) => console.log(`  · progress: ${p.message ?? p.progress}`),
      timeout: 120_000,
    },
  );
  show(result);
  return result;
}

/** Scenario IDs and slot keys are not discoverable through the tools; read them from the sandbox CLI. */
async function sandboxFacts() {
  const child = spawn(process.execPath, [BIN, "sandbox", "--port", "0", "--now", NOW], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  const first = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`sandbox exited (${code})`)));
  });
  child.kill("SIGTERM");
  return JSON.parse(first);
}

const dataDir = await mkdtemp(join(tmpdir(), "crm-demo-"));
const facts = await sandboxFacts();
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [BIN],
  env: {
    PATH: process.env.PATH ?? "",
    CRM_DATA_DIR: dataDir,
    CRM_SANDBOX_NOW: NOW,
    CRM_POLL_INTERVAL_SECONDS: "1",
    CRM_LOG_LEVEL: "warn",
  },
  stderr: "inherit",
});
const client = new Client({ name: "crm-insights-demo", version: "1.0.0" });
try {
  await client.connect(transport);
  rule("Server instructions (what the assistant is told up front)");
  console.log(client.getInstructions());
  const { tools } = await client.listTools();
  console.log(`\nTools: ${tools.map((t) => t.name).join(", ")}`);

  const metrics = await call(
    client,
    "Which campaigns did best over the last 30 days?",
    "campaign_metrics",
    {
      sort_by: "revenue",
      top_n: 8,
    },
  );
  const ranked = metrics.structuredContent?.campaigns ?? [];

  let campaignExport;
  for (const campaign of ranked.slice(0, 4)) {
    const result = await call(
      client,
      `Export the raw events of "${campaign.name}" for that period.`,
      "start_export",
      {
        type: "campaign_event_data",
        campaign_id: campaign._id,
        from: metrics.structuredContent.window.task_from.slice(0, 10),
        to: NOW.slice(0, 10),
        wait_seconds: 30,
      },
    );
    let current = result;
    while (!current.isError && current.structuredContent?.done === false) {
      current = await call(
        client,
        "(the assistant follows the next step it was given)",
        "check_export",
        {
          job_id: current.structuredContent.job._id,
          wait_seconds: 30,
        },
      );
    }
    if (!current.isError) {
      campaignExport = current;
      break;
    }
  }

  const scenarioId = facts.scenario_ids[0];
  const to = NOW.slice(0, 10);
  const from = new Date(Date.parse(NOW) - 13 * 86_400_000).toISOString().slice(0, 10);
  let scenarioExport = await call(
    client,
    `And the daily metrics of scenario ${scenarioId} for the last two weeks.`,
    "start_export",
    {
      type: "scenario_daily_metrics",
      scenario_id: scenarioId,
      from,
      to,
      wait_seconds: 30,
    },
  );
  while (!scenarioExport.isError && scenarioExport.structuredContent?.done === false) {
    scenarioExport = await call(client, "(following the next step)", "check_export", {
      job_id: scenarioExport.structuredContent.job._id,
      wait_seconds: 30,
    });
  }

  if (tools.some((t) => t.name === "summarize_export")) {
    for (const done of [campaignExport, scenarioExport]) {
      if (done === undefined || done.isError) continue;
      await call(client, "What is in that file?", "summarize_export", {
        job_id: done.structuredContent.job._id,
      });
    }
  }

  await call(client, "Which export jobs do we have?", "check_export", {});

  // A user who received the campaign: the first platform_user_id in the exported file.
  let user;
  if (campaignExport?.structuredContent?.file_path) {
    const head = (await readFile(campaignExport.structuredContent.file_path, "utf8"))
      .slice(0, 20_000)
      .split(/\r?\n/);
    const column = head[0].split(",").indexOf("platform_user_id");
    user = head
      .slice(1)
      .map((l) => l.split(",")[column])
      .find((v) => v !== undefined && v !== "");
  }
  const personal = facts.slot_keys.find((k) => k.includes("personal")) ?? facts.slot_keys[0];
  const similar = facts.slot_keys.find((k) => k.includes("similar")) ?? facts.slot_keys[0];
  const forUser = await call(
    client,
    `What would we recommend to ${user ?? "a new visitor"}?`,
    "recommend_products",
    {
      slot_key: personal,
      ...(user === undefined ? {} : { platform_user_id: user }),
      limit: 5,
    },
  );
  const product = forUser.structuredContent?.item_ids?.[0];
  if (product !== undefined) {
    await call(client, `And what is similar to product ${product}?`, "recommend_products", {
      slot_key: similar,
      item_ids: [product],
      limit: 5,
    });
  }
  rule(`Done. Files and the job ledger are in ${dataDir} (removed now).`);
} finally {
  await client.close();
  await rm(dataDir, { recursive: true, force: true });
}
