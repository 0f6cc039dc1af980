// `npm run demo`: an analyst's conversation with the MCP server, as an assistant would run it.
// Spawns the built server (`node dist/cli.js`) over stdio with the SDK client, in embedded-sandbox
// mode with a temporary data folder, and prints each tool call and what the assistant sees.
// Every step it expects (metrics, the campaign CSV export(s) its next_calls give, the scenario
// XLSX export, both summaries, the listing, recommendations, and a question across campaigns over
// the history of exports) must happen: otherwise it says which did not and exits 1.
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

/** A step the demo expects did not happen: say which, and make the run fail. */
class StepMissing extends Error {}
const stepsDone = [];
function expectStep(ok, what) {
  if (!ok) throw new StepMissing(what);
  stepsDone.push(what);
}

/** The calls of a given tool a result gives as next_calls (next_step as data), in order. */
function nextCalls(result, tool) {
  const calls = result.structuredContent?.next_calls;
  if (!Array.isArray(calls)) return [];
  return calls.filter((c) => c?.tool === tool).map((c) => c.arguments);
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
    // A test lowers the download cap to check that a refused step fails the demo.
    ...(process.env.CRM_MAX_DOWNLOAD_MB
      ? { CRM_MAX_DOWNLOAD_MB: process.env.CRM_MAX_DOWNLOAD_MB }
      : {}),
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

  // Ranked by conversion rate, the top campaign is a small A/B test (about 2,000 sends): its
  // export is a few MB. Ranked by revenue it would be the sandbox's 2,000,000-send campaign, some
  // 560 MB in two exports, which the benchmarks measure instead (bench/sandbox-export.mjs).
  const metrics = await call(
    client,
    "Which campaigns converted best over the last 30 days?",
    "campaign_metrics",
    {
      sort_by: "conversion_rate",
      top_n: 8,
    },
  );
  expectStep(!metrics.isError, "campaign_metrics answered");
  const best = metrics.structuredContent?.campaigns?.[0];
  expectStep(best !== undefined, "campaign_metrics found a campaign");
  const suggested = nextCalls(metrics, "start_export");
  expectStep(suggested.length > 0, "campaign_metrics gave start_export calls in next_calls");
  if (suggested.length > 1) {
    console.log(
      `\nAssistant: the campaign is too large for one export in this window; as next_step says, I export it in ${suggested.length} date ranges.`,
    );
  }
  const campaignExports = [];
  for (const [i, args] of suggested.entries()) {
    const part = suggested.length > 1 ? ` (part ${i + 1} of ${suggested.length})` : "";
    const result = await followUntilDone(
      client,
      await call(
        client,
        `Export the raw events of "${best.name}" for that period${part}.`,
        "start_export",
        { ...args, wait_seconds: 30 },
      ),
    );
    expectStep(
      !result.isError && typeof result.structuredContent?.file_path === "string",
      `campaign export ${JSON.stringify(args)} downloaded its file`,
    );
    campaignExports.push(result);
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

  expectStep(
    !scenarioExport.isError && typeof scenarioExport.structuredContent?.file_path === "string",
    "scenario export downloaded its file",
  );

  for (const done of [...campaignExports, scenarioExport]) {
    const summary = await call(client, "What is in that file?", "summarize_export", {
      job_id: done.structuredContent.job._id,
    });
    const kind = done.structuredContent.job.type;
    expectStep(
      !summary.isError && summary.structuredContent?.kind === kind,
      `summarize_export summarized the ${kind} export ${done.structuredContent.job._id}`,
    );
  }

  // A question summarize_export does not foresee, in SQL over every campaign export at once.
  const question = await call(
    client,
    "Per group, how many users opened the message, and how many of them never converted?",
    "query_export",
    {
      job_ids: campaignExports.map((done) => done.structuredContent.job._id),
      sql: [
        "SELECT coalesce(\"group\", '(none)') AS ab_group, count(*) AS openers,",
        "  count(*) FILTER (WHERE conversions = 0) AS never_converted",
        'FROM (SELECT "group", coalesce(platform_user_id, user_id) AS who,',
        "  count(*) FILTER (WHERE event_role = 'open') AS opens,",
        "  count(*) FILTER (WHERE event_role = 'conversion') AS conversions",
        "  FROM events GROUP BY ALL)",
        "WHERE opens > 0 GROUP BY ALL ORDER BY ab_group",
      ].join("\n"),
    },
  );
  expectStep(
    !question.isError && (question.structuredContent?.row_count ?? 0) > 0,
    "query_export answered a question in SQL over the campaign exports",
  );

  const listing = await call(client, "Which export jobs do we have?", "check_export", {});
  expectStep(
    !listing.isError && listing.structuredContent?.jobs?.length === campaignExports.length + 1,
    "check_export listed every job made",
  );

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
  expectStep(!forUser.isError && product !== undefined, "recommend_products recommended items");
  const alike = await call(
    client,
    `And what is similar to product ${product}?`,
    "recommend_products",
    { slot_key: similar, item_ids: [product], limit: 5 },
  );
  expectStep(!alike.isError, "recommend_products answered for similar products");

  // Every export downloaded above was also added to the history of exports: with one more
  // campaign (the smallest of the ranking, so the demo stays quick), a question across both.
  const another = (metrics.structuredContent?.campaigns ?? [])
    .filter((c) => c._id !== best._id)
    .sort((a, b) => a.sent_count - b.sent_count)[0];
  expectStep(another !== undefined, "campaign_metrics ranked a second campaign");
  const window = suggested[0];
  const second = await followUntilDone(
    client,
    await call(client, `Export "${another.name}" for the same period too.`, "start_export", {
      type: "campaign_event_data",
      campaign_id: another._id,
      from: window.from,
      to: suggested.at(-1).to,
      wait_seconds: 30,
    }),
  );
  expectStep(
    !second.isError && typeof second.structuredContent?.file_path === "string",
    `campaign export of ${another._id} downloaded its file`,
  );
  const history = await call(client, "What do we have across campaigns now?", "query_export", {
    history: true,
  });
  const held = history.structuredContent?.history;
  expectStep(
    !history.isError && held?.campaigns_total >= 2,
    "query_export described a history of two campaigns or more",
  );
  // One of the questions the description offers, run as it gives it.
  const weekly = held.examples.find((e) => e.title.startsWith("Weekly open rate"));
  expectStep(weekly !== undefined, "the history's description offered the weekly open rate");
  const across = await call(
    client,
    "Across both campaigns, how did the open rate move week by week, per channel?",
    "query_export",
    {
      history: true,
      sql: weekly.sql,
      chart: { type: "line", x: "week", y: ["open_rate"], series: "channel" },
    },
  );
  expectStep(
    !across.isError && (across.structuredContent?.row_count ?? 0) > 0,
    "query_export answered a question across campaigns over the history",
  );
  rule(`Done. Files and the job ledger are in ${dataDir} (removed now).`);
  console.log(`Steps done (${stepsDone.length}):\n- ${stepsDone.join("\n- ")}`);
} catch (error) {
  if (!(error instanceof StepMissing)) throw error;
  rule(`DEMO FAILED: expected step did not happen: ${error.message}`);
  process.exitCode = 1;
} finally {
  await client.close();
  await rm(dataDir, { recursive: true, force: true });
}
