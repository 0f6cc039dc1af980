import type { ApiClient } from "./api/client.js";
import type { CatalogProduct } from "./catalog.js";
import type { Config } from "./config.js";
import { log } from "./log.js";
import type { RunningSandbox } from "./sandbox/types.js";

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
  close(): Promise<void>;
}

export async function startEmbeddedSandbox(config: Config): Promise<EmbeddedSandbox> {
  const [{ startSandbox }, { createApiClient, apiClientOptionsFromConfig }] = await Promise.all([
    import("./sandbox/index.js"),
    import("./api/client.js"),
  ]);
  const started = Date.now();
  const sandbox = await startSandbox({
    host: "127.0.0.1",
    port: 0,
    seed: config.sandbox.seed,
    jobSeconds: config.sandbox.jobSeconds,
    ...(config.sandbox.now === undefined ? {} : { now: config.sandbox.now }),
  });
  const api = createApiClient(
    apiClientOptionsFromConfig(config, {
      baseUrl: sandbox.base_url,
      realtimeBaseUrl: sandbox.realtime_base_url,
      applicationId: sandbox.application_id,
      secretKey: sandbox.secret_key,
      recommendSecretKey: sandbox.recommend_secret_key,
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
    async close() {
      await api.close();
      await sandbox.close();
    },
  };
}
