import type { ResourceLink } from "@modelcontextprotocol/server";
import { z } from "zod";
import { log } from "../log.js";
import { saveFullResult } from "./full-results.js";
import { estimateTokens, fitToBudget } from "./result-budget.js";
import type { ToolRuntime } from "./tool.js";

/** Added to every tool's output schema: what a result left out to stay within its budget. */
export const BUDGET_FIELDS = {
  truncated: z.boolean().optional().describe("true: lists were cut to fit the token budget"),
  more: z
    .object({
      omitted: z.array(z.object({ field: z.string(), shown: z.number(), total: z.number() })),
      full_result: z.string().optional(),
      full_result_file: z.string().optional(),
    })
    .optional()
    .describe("what truncated left out; full_result: its resource URI"),
};

/** `more` with the longest URI and file path a saved result can have. */
function moreTokens(cuts: Array<{ field: string; shown: number; total: number }>): number {
  const sample = {
    truncated: true,
    more: {
      omitted: cuts,
      full_result: `crm-result://${"x".repeat(64)}`,
      full_result_file: "/".repeat(256),
    },
  };
  return estimateTokens(JSON.stringify(sample));
}

export interface BoundedResult {
  structured: Record<string, unknown>;
  /** Appended to the text: what was cut and where the rest is; "" when nothing was. */
  note: string;
  links: ResourceLink[];
}

/**
 * Cuts structuredContent to the configured budget and keeps the whole result as a
 * `crm-result://` resource. A failure to save the copy still returns the cut result (saying so).
 */
export async function withinBudget(
  tool: string,
  structured: Record<string, unknown>,
  runtime: ToolRuntime,
): Promise<BoundedResult> {
  const max = runtime.config.resultMaxTokens;
  let fitted = fitToBudget(structured, max);
  if (fitted.cuts.length === 0) return { structured, note: "", links: [] };
  // Room for `truncated` and `more`, which the cut result gains.
  for (let room = 400; room < max && fitted.tokens + moreTokens(fitted.cuts) > max; room += 400) {
    fitted = fitToBudget(structured, max - room);
  }
  const lists = fitted.cuts.map((c) => `${c.field} ${c.shown} of ${c.total}`).join(", ");
  let saved: Awaited<ReturnType<typeof saveFullResult>> | undefined;
  try {
    saved = await saveFullResult(runtime.config.dataDir, tool, structured, Date.now());
  } catch (error) {
    log.warn("could not keep the whole result", { tool, error: String(error) });
  }
  const more = {
    omitted: fitted.cuts,
    ...(saved === undefined ? {} : { full_result: saved.uri, full_result_file: saved.path }),
  };
  const where =
    saved === undefined
      ? "the whole result could not be kept; narrow the request to see the rest"
      : `the whole result is the resource ${saved.uri} (file ${saved.path})`;
  return {
    structured: { ...fitted.value, truncated: true, more },
    note: `\n\nstructuredContent was cut to about ${runtime.config.resultMaxTokens.toLocaleString("en-US")} tokens (shown: ${lists}); ${where}.`,
    links:
      saved === undefined
        ? []
        : [
            {
              type: "resource_link",
              uri: saved.uri,
              name: `${tool} whole result`,
              mimeType: "application/json",
            },
          ],
  };
}
