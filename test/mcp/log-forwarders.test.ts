import { afterAll, beforeAll, expect, it } from "vitest";
import { addLogForwarder } from "../../src/log.js";
import { type Harness, startHarness } from "../helpers/tool-harness.js";
import { waitUntil } from "../helpers/wait-until.js";

/**
 * The MCP logging bridge is one receiver of the process's log among others: another one added
 * and removed meanwhile (a test watching the log, in a worker that runs many test files) leaves
 * the bridge sending each call's messages to its client.
 */

let h: Harness;
const received: string[] = [];

beforeAll(async () => {
  h = await startHarness();
  h.client.setNotificationHandler("notifications/message", (n) => {
    received.push(String((n.params.data as { log?: string }).log));
  });
  await h.client.setLoggingLevel("debug");
});

afterAll(async () => {
  await h?.close();
});

async function callAndWait(): Promise<void> {
  received.length = 0;
  const result = await h.call("check_export", {});
  expect(result.isError).toBeFalsy();
  await waitUntil(() => received.includes("tool call"), "the call's debug message");
}

it("keeps sending a call's messages after another receiver came and went", async () => {
  await callAndWait();
  const seen: string[] = [];
  const remove = addLogForwarder((_level, message) => seen.push(message));
  await callAndWait();
  remove();
  expect(seen).toContain("tool call");
  await callAndWait();
  expect(seen.filter((m) => m === "tool call")).toHaveLength(1);
});
