import type { ApiClient } from "../api/client.js";
import type { CatalogProduct } from "../catalog.js";
import type { Config } from "../config.js";
import { dataFolderInUse, sandboxServiceFolder } from "../files/data-folder.js";
import { log } from "../log.js";
import type { RunningSandbox } from "./types.js";

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
  const [{ startSandbox }, { createApiClient, apiClientOptionsFromConfig }, { pinnedClock }] =
    await Promise.all([import("./index.js"), import("../api/client.js"), import("./clock.js")]);
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
