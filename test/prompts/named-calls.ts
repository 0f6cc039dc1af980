import { expect } from "vitest";
import type { Harness, ToolResult } from "../helpers/tool-harness.js";

/** A tool call a text names as `tool {JSON arguments}`, read exactly as the model reads it. */
export interface NamedCall {
  tool: string;
  arguments: Record<string, unknown>;
}

const TOOLS = [
  "campaign_metrics",
  "start_export",
  "check_export",
  "summarize_export",
  "query_export",
  "recommend_products",
];
const NAME = new RegExp(`\\b(${TOOLS.join("|")}) \\{`, "g");

/**
 * Every `tool {...}` in the text, in order. The JSON object ends at its matching brace (strings
 * and escapes honoured); one that is not valid JSON fails, as it would leave a model guessing.
 */
export function namedCalls(text: string): NamedCall[] {
  const calls: NamedCall[] = [];
  for (const match of text.matchAll(NAME)) {
    const start = (match.index ?? 0) + match[0].length - 1;
    const end = objectEnd(text, start);
    const json = text.slice(start, end);
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch {
      throw new Error(`${match[1]} names arguments that are not JSON: ${json}`);
    }
    calls.push({ tool: match[1] as string, arguments: parsed as Record<string, unknown> });
  }
  return calls;
}

function objectEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  throw new Error(`unbalanced arguments from offset ${start}: ${text.slice(start, start + 80)}`);
}

/** The placeholder the prompts write for a job_id returned by start_export. */
export const JOB_ID = "<job_id>";

export function mentionsJobId(call: NamedCall): boolean {
  return JSON.stringify(call.arguments).includes(JOB_ID);
}

export function withJobId(call: NamedCall, jobId: string): NamedCall {
  return {
    tool: call.tool,
    arguments: JSON.parse(JSON.stringify(call.arguments).replaceAll(JOB_ID, jobId)) as Record<
      string,
      unknown
    >,
  };
}

/** A call that was run, and what it answered. */
export interface RunCall {
  call: NamedCall;
  result: ToolResult;
}

/** The calls a result names as data (`next_calls`), which its `next_step` text must name alike. */
export function nextCallsOf(result: ToolResult): NamedCall[] {
  const calls = (result.structured.next_calls ?? []) as NamedCall[];
  expect(
    namedCalls(String(result.structured.next_step ?? "")),
    "next_step names next_calls",
  ).toEqual(calls);
  return calls;
}

/**
 * Runs a start_export as written, then the check_export calls its results name as next step
 * until the next step is summarize_export (the file is downloaded). Each call must succeed.
 * `before` runs before every start_export (the test moves the sandbox clock past its rate limit).
 */
export async function exportAndFollow(
  h: Harness,
  call: NamedCall,
  log: RunCall[],
): Promise<string> {
  let result = await run(h, call, log);
  for (let steps = 0; steps < 20; steps++) {
    const [next] = nextCallsOf(result);
    expect(next, `a next step after ${call.tool}`).toBeDefined();
    if (next?.tool === "summarize_export") return String(next.arguments.job_id);
    expect(next?.tool).toBe("check_export");
    result = await run(h, next as NamedCall, log);
  }
  throw new Error(`the export of ${JSON.stringify(call.arguments)} never got its file`);
}

/** Runs one call through the SDK client and fails the test, naming the call, if it errs. */
export async function run(h: Harness, call: NamedCall, log: RunCall[]): Promise<ToolResult> {
  const result = await h.call(call.tool, call.arguments);
  log.push({ call, result });
  expect(
    result.isError,
    `${call.tool} ${JSON.stringify(call.arguments)}: ${result.text}`,
  ).toBeFalsy();
  return result;
}
