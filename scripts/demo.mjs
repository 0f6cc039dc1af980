// `npm run demo`: an analyst's conversation with the MCP server, as an assistant would run it.
// Spawns the built server (`node dist/cli.js`) over stdio with the SDK client, in embedded-sandbox
// mode with a temporary data folder, and prints each tool call and what the assistant sees.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const BIN = new URL("../dist/cli.js", import.meta.url).pathname;
// The sandbox's "today": its data lies in the days before.
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

/** The call a tool result gives as next_step, e.g. `start_export {"type": ...}`, as arguments. */
function nextCall(result, tool) {
  const step = result.structuredContent?.next_step;
  if (typeof step !== "string" || !step.startsWith(`${tool} {`)) return undefined;
  const json = step.slice(tool.length + 1).replace(/\)?\s*\(.*$/, "");
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}

/** `YYYY-MM-DD` plus n days. */
const addDays = (date, n) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

/**
 * The latest of the split calls a LimitExceeded error suggests (`start_export {...}`), or, when
 * it names none, the last 7 days of the range.
 */
function splitAdvice(text, args) {
  const suggested = [...text.matchAll(/start_export (\{[^}]*\})/g)]
    .map((m) => {
      try {
        return JSON.parse(m[1]);
      } catch {
        return undefined;
      }
    })
    .filter((a) => a?.from !== undefined && a.to !== undefined);
  const latest = suggested.sort((a, b) => a.from.localeCompare(b.from)).at(-1);
  if (latest !== undefined && latest.from > args.from) return latest;
  const from = addDays(args.to, -6);
  return { ...args, from: from > args.from ? from : args.to };
}

/** Waits on a job the way the assistant is told to: check_export until it is done. */
async function followUntilDone(client, result) {
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
  return current;
}

const dataDir = await mkdtemp(join(tmpdir(), "crm-demo-"));
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
  const instructions = client.getInstructions() ?? "";
  console.log(instructions);
  const { tools } = await client.listTools();
  console.log(`\nTools: ${tools.map((t) => t.name).join(", ")}`);
  // In sandbox mode the instructions name what exists there, as an assistant would read them.
  const scenarioIds = instructions.match(/scn_[0-9a-f]+/g) ?? [];
  const slotLine = instructions.split("\n").find((l) => l.startsWith("Recommendation slot keys:"));
  const slotKeys = [...(slotLine ?? "").matchAll(/([a-z_]+) \(/g)].map((m) => m[1]);
  const behaviourUser = /e\.g\. (pu_\d{6})/.exec(instructions)?.[1];

  const metrics = await call(
    client,
    "Which campaigns did best over the last 30 days?",
    "campaign_metrics",
    {
      sort_by: "revenue",
      top_n: 8,
    },
  );
  const best = metrics.structuredContent?.campaigns?.[0];

  let campaignExport;
  const suggested = nextCall(metrics, "start_export");
  if (best !== undefined && suggested !== undefined) {
    let args = { ...suggested, wait_seconds: 30 };
    let say = `Export the raw events of "${best.name}" for that period.`;
    // The service refuses ranges over 120 rounds or 2,000,000 sends; the error says to split the
    // period. The assistant does so, taking the most recent part first.
    for (let attempt = 0; attempt < 3; attempt++) {
      const result = await followUntilDone(client, await call(client, say, "start_export", args));
      const text = result.content[0]?.text ?? "";
      if (!result.isError || !/too large|split/i.test(text)) {
        if (!result.isError) campaignExport = result;
        break;
      }
      const split = splitAdvice(text, args);
      console.log(
        `\nAssistant: the period is too large for one export job, so, as the error advises, I split it and take the most recent part first (${split.from} to ${split.to}).`,
      );
      args = { ...split, wait_seconds: 30 };
      say = `(splitting the period of "${best.name}": ${split.from} to ${split.to})`;
    }
  }

  const scenarioId = scenarioIds[0];
  const to = NOW.slice(0, 10);
  const from = new Date(Date.parse(NOW) - 13 * 86_400_000).toISOString().slice(0, 10);
  const scenarioExport = await followUntilDone(
    client,
    await call(
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
    ),
  );

  if (tools.some((t) => t.name === "summarize_export")) {
    for (const done of [campaignExport, scenarioExport]) {
      if (done === undefined || done.isError) continue;
      await call(client, "What is in that file?", "summarize_export", {
        job_id: done.structuredContent.job._id,
      });
    }
  }

  await call(client, "Which export jobs do we have?", "check_export", {});

  // A user with shopping behaviour (named in the instructions), so the answer is personalized.
  const user = behaviourUser;
  const personal = slotKeys.find((k) => k.includes("personal")) ?? slotKeys[0];
  const similar = slotKeys.find((k) => k.includes("similar")) ?? slotKeys[0];
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
