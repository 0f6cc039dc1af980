import { ConfigError, envText, loadConfig } from "../config.js";

/**
 * What `install` writes for this server: the absolute path of the Node running it and of the
 * package's bin (a client starts servers in a folder of its own and, on macOS, often without the
 * shell's PATH), and the CRM_* values given, or none: the embedded sandbox.
 */

export interface Setting {
  option: string;
  variable: string;
  secret: boolean;
}

/** The options `install` takes for the server's configuration, and the variables they set. */
export const SETTINGS: readonly Setting[] = [
  { option: "--base-url", variable: "CRM_BASE_URL", secret: false },
  { option: "--realtime-base-url", variable: "CRM_REALTIME_BASE_URL", secret: false },
  { option: "--application-id", variable: "CRM_APPLICATION_ID", secret: false },
  { option: "--secret-key", variable: "CRM_SECRET_KEY", secret: true },
  { option: "--recommend-secret-key", variable: "CRM_RECOMMEND_SECRET_KEY", secret: true },
  { option: "--time-zone", variable: "CRM_TIME_ZONE", secret: false },
  { option: "--data-dir", variable: "CRM_DATA_DIR", secret: false },
];

/** Values never shown: the keys, and any other variable given with --env that holds a secret. */
export function isSecretVariable(name: string): boolean {
  return (
    SETTINGS.some((s) => s.secret && s.variable === name) ||
    /KEY|SECRET|TOKEN|PASSWORD|DATABASE_URL/.test(name)
  );
}

export class InstallError extends Error {
  override name = "InstallError";
}

/** Where each value came from, for the summary (never the value of a secret). */
export type Source = "option" | "environment";

export interface ServerEnv {
  env: Record<string, string>;
  sources: Record<string, Source>;
}

/**
 * The variables to write: each setting from its option, else from this process's environment
 * (so a key can stay out of the shell's history), plus `--env NAME=VALUE` pairs; checked by the
 * server's own configuration rules, so what is written starts.
 */
export function serverEnv(
  options: ReadonlyMap<string, string>,
  extra: ReadonlyMap<string, string>,
  processEnv: NodeJS.ProcessEnv,
  homeDir: string,
): ServerEnv {
  const env: Record<string, string> = {};
  const sources: Record<string, Source> = {};
  for (const setting of SETTINGS) {
    const given = options.get(setting.option);
    const inherited = envText(processEnv[setting.variable]);
    if (given !== undefined) {
      env[setting.variable] = given;
      sources[setting.variable] = "option";
    } else if (inherited !== undefined) {
      env[setting.variable] = inherited;
      sources[setting.variable] = "environment";
    }
  }
  for (const [name, value] of extra) {
    env[name] = value;
    sources[name] = "option";
  }
  try {
    loadConfig(env, { homeDir });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new InstallError(
      `${error.message.replace(/^Invalid configuration:/, "The server would refuse this configuration:")}\nNothing was written. Give the values as options (crm-insights-mcp install --help) or leave them all out for the sandbox.`,
    );
  }
  return { env, sources };
}

export interface ServerCommand {
  /** Absolute path of the Node executable. */
  node: string;
  /** Absolute path of the package's bin (dist/cli.js). */
  bin: string;
}

/** One server entry as clients write it (VS Code and Claude Code name the transport). */
export function serverEntry(
  command: ServerCommand,
  env: Record<string, string>,
  typed: boolean,
): Record<string, unknown> {
  return {
    ...(typed ? { type: "stdio" } : {}),
    command: command.node,
    args: [command.bin],
    ...(Object.keys(env).length > 0 ? { env } : {}),
  };
}

/**
 * The same values with every secret replaced by a placeholder the server refuses by name if it
 * is pasted as it stands.
 */
export function maskSecrets(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).map(([name, value]) => [
      name,
      isSecretVariable(name) ? `<${name}: not shown; paste the value here>` : value,
    ]),
  );
}
