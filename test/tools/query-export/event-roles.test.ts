import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportsFolder } from "../../../src/files/data-folder.js";
import { writeCampaignCsv } from "../../../src/sandbox/csv-writer.js";
import { CHANNEL_PROFILES } from "../../../src/sandbox/world/channels.js";
import { type Harness, startHarness } from "../../helpers/tool-harness.js";

/**
 * query_export's event_role through the MCP client, beside summarize_export on the same file with
 * the same conversion_event_type; the description names the roles and its examples use them.
 */

let h: Harness;
let file: string;
let openType: string;

beforeAll(async () => {
  h = await startHarness();
  const world = h.sandbox.world;
  const campaign = world.campaigns.find(
    (c) =>
      c.role === "normal" && c.tasks.some((t) => t.aggregated && t.rounds.some((r) => r.isControl)),
  );
  if (campaign === undefined) throw new Error("the sandbox has no A/B campaign with a control");
  const task = campaign.tasks.find((t) => t.aggregated && t.rounds.some((r) => r.isControl));
  if (task === undefined) throw new Error("no aggregated task with a control group");
  await mkdir(exportsFolder(h.dataDir), { recursive: true });
  file = join(exportsFolder(h.dataDir), "ab-control.csv");
  await writeCampaignCsv(
    world,
    task.rounds.map((round) => ({ task, round })),
    file,
    540,
  );
  openType = CHANNEL_PROFILES[campaign.channel].openEvent;
}, 60_000);
afterAll(async () => {
  await h?.close();
});

async function totalsOf(conversion: string | undefined) {
  const args = conversion === undefined ? {} : { conversion_event_type: conversion };
  const summary = await h.call("summarize_export", { file, ...args });
  expect(summary.isError, summary.text).toBeFalsy();
  const t = summary.structured.totals as Record<string, number>;
  const types = summary.structured.event_types as { role: string; count: number }[];
  const other = types.filter((e) => e.role === "other").reduce((n, e) => n + e.count, 0);
  const query = await h.call("query_export", {
    files: [file],
    sql: "SELECT event_role, count(*) FROM events GROUP BY 1",
    ...args,
  });
  expect(query.isError, query.text).toBeFalsy();
  return {
    query: new Map(query.structured.rows as [string, number][]),
    summary: new Map(
      Object.entries({
        sent: t.sent,
        received: t.received,
        failed: t.failed,
        control: t.control_assigned,
        open: t.opens,
        click: t.clicks,
        conversion: t.conversions,
        other,
      }).filter(([, n]) => (n ?? 0) > 0),
    ),
  };
}

describe("query_export's event_role over MCP", () => {
  it("equals summarize_export's totals, with and without conversion_event_type", async () => {
    const plain = await totalsOf(undefined);
    expect(plain.query).toEqual(plain.summary);
    expect(plain.query.get("control")).toBeGreaterThan(0);
    const given = await totalsOf(" landing_clicked ");
    // landing_clicked stays a click when named: the fixed roles win, as in the summary.
    expect(given.query).toEqual(given.summary);
    expect(given.query.has("conversion")).toBe(false);
    expect(given.query.get("other")).toBe(plain.query.get("conversion"));
    // The channel's open type named: its rows are conversions, none are opens.
    const opens = await totalsOf(openType);
    expect(opens.query).toEqual(opens.summary);
    expect(opens.query.get("conversion")).toBe(plain.query.get("open"));
  });

  it("without sql: roles in the description, and every example uses event_role and runs", async () => {
    const r = await h.call("query_export", { files: [file], conversion_event_type: "purchase" });
    expect(r.isError, r.text).toBeFalsy();
    const d = r.structured.description as {
      conversion_event_type: string | null;
      event_roles: { event_role: string; rows: number }[];
      event_types: { event_type: string; event_role: string }[];
      examples: string[];
    };
    expect(d.conversion_event_type).toBe("purchase");
    expect(d.event_types.find((e) => e.event_type === "purchase")?.event_role).toBe("conversion");
    expect(d.event_roles.map((e) => e.event_role)).toContain("control");
    expect(r.text).toContain("**event_role** (summarize_export's rules; conversion: purchase");
    const events = d.examples.filter((sql) => sql.includes("FROM events"));
    expect(events.length).toBeGreaterThanOrEqual(5);
    for (const sql of events) {
      expect(sql).toContain("event_role");
      expect(sql).not.toContain("event_type");
      const run = await h.call("query_export", { files: [file], sql });
      expect(run.isError, `${sql}\n${run.text}`).toBeFalsy();
      expect(run.structured.row_count, sql).toBeGreaterThan(0);
    }
  });
});
