import type { ToolRuntime } from "../mcp/tool.js";
import type { RecentCampaignsLookup } from "./recent-campaigns.js";

/** A campaign or scenario the server has seen, for argument completion. */
export interface KnownId {
  id: string;
  name?: string;
}

const LOOKUP_DEADLINE_MS = 3_000;
const MAX_COMPLETIONS = 100;

/**
 * Where completion finds IDs: the export ledger (what was exported before), the campaigns the
 * service reports over its widest metrics window (recent-campaigns.ts), and in sandbox mode the
 * sandbox's scenarios. Completion must answer quickly and never fail a client's typing: a slow or failing
 * service gives what is known.
 */
export function knownIds(runtime: ToolRuntime, recent: RecentCampaignsLookup) {
  const fromLedger = async (field: "campaign_id" | "scenario_id"): Promise<KnownId[]> => {
    const entries = await runtime.ledger.list(200).catch(() => []);
    return entries.flatMap((e) => {
      const id = (e.request as Record<string, unknown>)[field];
      return typeof id === "string" ? [{ id }] : [];
    });
  };

  const recentCampaigns = async (): Promise<KnownId[]> =>
    ((await recent(LOOKUP_DEADLINE_MS))?.campaigns ?? []).map((c) => ({ id: c._id, name: c.name }));

  const sandboxScenarios = async (): Promise<KnownId[]> => {
    if (!runtime.sandbox) return [];
    const { sandboxScenarios } = await import("../sandbox/embedded.js");
    return sandboxScenarios(runtime.config.sandbox.seed, runtime.now());
  };

  return {
    async campaignIds(prefix: string): Promise<string[]> {
      const [ledger, service] = await Promise.all([fromLedger("campaign_id"), recentCampaigns()]);
      return matching([...ledger, ...service], prefix);
    },
    async scenarioIds(prefix: string): Promise<string[]> {
      const [ledger, sandbox] = await Promise.all([fromLedger("scenario_id"), sandboxScenarios()]);
      return matching([...ledger, ...sandbox], prefix);
    },
  };
}

/** IDs that start with the typed text, or whose name contains it (Korean names are typed too). */
function matching(ids: KnownId[], typed: string): string[] {
  const needle = typed.trim().toLowerCase();
  const seen = new Set<string>();
  const out: string[] = [];
  for (const { id, name } of ids) {
    if (seen.has(id)) continue;
    if (
      needle === "" ||
      id.toLowerCase().startsWith(needle) ||
      (name?.toLowerCase().includes(needle) ?? false)
    ) {
      seen.add(id);
      out.push(id);
    }
    if (out.length >= MAX_COMPLETIONS) break;
  }
  return out;
}
