/**
 * Library entry: the pieces the bin is built from, for engineers who automate reports in code.
 * The bin (`dist/cli.js`) does not import this file, so none of it weighs on the server's start.
 */
export { AnalysisError } from "./analysis/errors.js";
export { renderSummaryMarkdown, summarizeFile } from "./analysis/index.js";
export { createApiClient } from "./api/client.js";
export * from "./api/dates.js";
export * from "./api/errors.js";
export * from "./api/schemas.js";
export type * from "./api/types.js";
export { apiClientOptionsFromConfig, type Config, ConfigError, loadConfig } from "./config.js";
export { startSandbox } from "./sandbox/embedded.js";
export type * from "./sandbox/types.js";
export { createServer } from "./server.js";
