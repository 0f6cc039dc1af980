import type { ApiClient } from "../api/client.js";
import type { CatalogProduct } from "../catalog.js";
import { apiClientOptionsFromConfig, type Config } from "../config.js";
import { dataFolderInUse, sandboxServiceFolder } from "../files/data-folder.js";
import { log } from "../log.js";
import type { RunningSandbox, SandboxOptions } from "./types.js";

/**
 * The one door into the sandbox for the rest of the server: starting it, its clock, and what it
 * holds that an assistant has no tool to discover. Nothing outside src/sandbox/ imports any other
 * module of it (test/architecture.test.ts), so the double stays apart from the client it checks.
 */

export { pinnedClock } from "./clock.js";

/**
 * The embedded sandbox of sandbox mode (CRM_BASE_URL unset): started in-process on a loopback
 * port at the first tool call, never at start-up, so the server's cold start does not pay for
 * generating the synthetic world.
 */
export interface EmbeddedSandbox {
  sandbox: RunningSandbox;
  api: ApiClient;
  /** The sandbox's products, used as the product catalog when CRM_PRODUCT_CATALOG is unset. */
  products: CatalogProduct[];
  /**
   * The sandbox's clock (its pinned "now" plus the real time elapsed): its job timestamps and
   * URL expiries are in this time, so expiry checks and the ledger must read it too.
   */
  now(): number;
  close(): Promise<void>;
}

export async function startEmbeddedSandbox(config: Config): Promise<EmbeddedSandbox> {
  const [{ startSandbox }, { createApiClient }, { pinnedClock }] = await Promise.all([
    import("./index.js"),
    import("../api/client.js"),
    import("./clock.js"),
  ]);
  const started = Date.now();
  // Started before the sandbox starts its own clock, so ours runs at most the start-up time ahead
  // of it: an expiry is then judged a little early, never late.
  const now = pinnedClock(config.sandbox.now);
  const sandbox = await startSandbox({
    host: "127.0.0.1",
    port: 0,
    seed: config.sandbox.seed,
    jobSeconds: config.sandbox.jobSeconds,
    // Its jobs and files outlive the process, as a real service's would: the next server process
    // on this data folder (a one-shot client starts one per call) still finds them.
    dataDir: sandboxServiceFolder(config),
    ...(config.sandbox.now === undefined ? {} : { now: config.sandbox.now }),
  });
  const api = createApiClient(
    apiClientOptionsFromConfig(config, {
      baseUrl: sandbox.base_url,
      realtimeBaseUrl: sandbox.realtime_base_url,
      applicationId: sandbox.application_id,
      secretKey: sandbox.secret_key,
      recommendSecretKey: sandbox.recommend_secret_key,
      // Synthetic files go to the sandbox's part of the data folder, apart from real exports.
      dataDir: dataFolderInUse(config),
      now,
    }),
  );
  log.info("embedded sandbox started", {
    base_url: sandbox.base_url,
    ms: Date.now() - started,
  });
  const products = sandbox.world.products.map((p) => ({
    id: p.id,
    name: p.name,
    price: p.price,
    extra: { category_id: p.category_id, brand_id: p.brand_id },
  }));
  return {
    sandbox,
    api,
    products,
    now,
    async close() {
      await api.close();
      await sandbox.close();
    },
  };
}

/**
 * Sandbox mode: the scenario IDs, slot keys and users with behaviour data, which the assistant
 * has no tool to discover (campaign IDs come from campaign_metrics). Derived from the seed
 * without starting the sandbox; loaded on demand so remote mode never imports the world.
 */
export async function sandboxGuide(seed: number): Promise<string> {
  const [{ createScenarios }, { SLOTS }, { platformUserIdOf }] = await Promise.all([
    import("./world/scenarios.js"),
    import("./world/recommend.js"),
    import("./world/users.js"),
  ]);
  // Scenario IDs and names depend on the seed only; the clock only places their data.
  const scenarios = createScenarios(seed, Date.now()).scenarios;
  const needs: Record<string, string> = {
    none: "platform_user_id optional",
    behavior: "item_ids, or a platform_user_id with behaviour",
    items: "needs item_ids",
  };
  const slots = SLOTS.filter((s) => s.state === "active").map(
    (s) => `${s.key} (${s.kind}; ${needs[s.input] ?? s.input})`,
  );
  const users = [42, 7, 1234].map(platformUserIdOf);
  return [
    "Sandbox mode (CRM_BASE_URL unset): synthetic data; nothing here is a real customer.",
    `Scenario IDs for start_export type scenario_daily_metrics: ${scenarios.map((s) => `${s._id} (${s.name})`).join(", ")}.`,
    `Recommendation slot keys: ${slots.join(", ")}.`,
    `Users with behaviour data (personalized results): pu_000000 to pu_002999, e.g. ${users.join(", ")}; other IDs are cold users. Product IDs: take them from a best_sellers recommendation.`,
  ].join("\n");
}

/** The sandbox's recommendation slot keys by state (they never change while it runs). */
export async function sandboxSlotKeys(): Promise<{ active: string[]; inactive: string[] }> {
  const { SLOTS } = await import("./world/recommend.js");
  return {
    active: SLOTS.filter((s) => s.state === "active").map((s) => s.key),
    inactive: SLOTS.filter((s) => s.state !== "active").map((s) => s.key),
  };
}

/** The sandbox's scenarios, for completion of `scenario_id`; derived from the seed alone. */
export async function sandboxScenarios(
  seed: number,
  now: number,
): Promise<{ id: string; name: string }[]> {
  const { createScenarios } = await import("./world/scenarios.js");
  return createScenarios(seed, now).scenarios.map((s) => ({ id: s._id, name: s.name }));
}

/** The sandbox service as a library (the package's entry exports it), loaded when first started. */
export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const sandbox = await import("./index.js");
  return sandbox.startSandbox(options);
}
