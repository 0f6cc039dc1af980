import { log } from "../log.js";
import type { ToolRuntime } from "../mcp/tool.js";

/** A campaign or scenario the server has seen, for argument completion. */
export interface KnownId {
  id: string;
  name?: string;
}

const CAMPAIGN_CACHE_MS = 5 * 60_000;
const LOOKUP_DEADLINE_MS = 3_000;
const MAX_COMPLETIONS = 100;

/**
 * Where completion finds IDs: the export ledger (what was exported before), the campaigns the
 * service reports for the last 90 days (one metrics request, cached for five minutes; metrics
 * requests cost no export budget), and in sandbox mode the sandbox's scenarios. Completion must
 * answer quickly and never fail a client's typing: a slow or failing service gives what is known.
 */
export function knownIds(runtime: ToolRuntime) {
  let campaigns: { at: number; ids: KnownId[] } | undefined;

  const fromLedger = async (field: "campaign_id" | "scenario_id"): Promise<KnownId[]> => {
    const entries = await runtime.ledger.list(200).catch(() => []);
    return entries.flatMap((e) => {
      const id = (e.request as Record<string, unknown>)[field];
      return typeof id === "string" ? [{ id }] : [];
    });
  };

  const recentCampaigns = async (): Promise<KnownId[]> => {
    const now = Date.now();
    if (campaigns !== undefined && now - campaigns.at < CAMPAIGN_CACHE_MS) return campaigns.ids;
    try {
      const api = await runtime.api();
      const to = runtime.now();
      const response = await api.campaignMetrics(
        {
          task_from: new Date(to - 90 * 86_400_000).toISOString(),
          task_to: new Date(to).toISOString(),
        },
        { deadline: Date.now() + LOOKUP_DEADLINE_MS },
      );
      const ids = response.campaigns.map((c) => ({ id: c._id, name: c.name }));
      campaigns = { at: now, ids };
      return ids;
    } catch (error) {
      log.debug("campaign ID completion: service not asked", { error: String(error) });
      return [];
    }
  };

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
