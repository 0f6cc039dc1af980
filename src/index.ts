export * from "./api/errors.js";
export * from "./api/schemas.js";
export type * from "./api/types.js";
export { type Config, ConfigError, loadConfig } from "./config.js";
