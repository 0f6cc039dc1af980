import { log } from "../log.js";
import { parseNowOption } from "./clock.js";
import { CSV_ORDERS, CUSTOMER_ID_SHAPES, PLATFORM_ID_SHAPES } from "./csv-shape.js";
import { startSandbox } from "./index.js";
import type { SandboxOptions } from "./types.js";

const USAGE =
  "Usage: crm-insights-mcp sandbox [--port N] [--host 127.0.0.1] [--seed N] [--now ISO-8601] [--job-seconds S]\n" +
  `  [--csv-order ${CSV_ORDERS.join("|")}] [--csv-platform-ids ${PLATFORM_ID_SHAPES.join("|")}]\n` +
  `  [--csv-customer-ids ${CUSTOMER_ID_SHAPES.join("|")}] [--huge-ab-test] [--data-dir PATH]\n` +
  "  (--csv-*: how campaign export CSVs are written, the same rows in every shape;\n" +
  "   --huge-ab-test: the huge campaign as an A/B test with a control group;\n" +
  "   --data-dir: keep export jobs and files there across restarts)";

/** The value if it is one of `allowed`, else a SandboxArgsError naming them. */
function oneOf<T extends string>(flag: string, value: string, allowed: readonly T[]): T {
  const found = allowed.find((item) => item === value);
  if (found === undefined) {
    throw new SandboxArgsError(
      `${flag} must be one of ${allowed.join(", ")}, got "${value.slice(0, 64)}"`,
    );
  }
  return found;
}

export class SandboxArgsError extends Error {}

/** Parses the contract's flags (`--flag value` or `--flag=value`); throws SandboxArgsError. */
export function parseSandboxArgs(args: readonly string[]): SandboxOptions {
  const options: SandboxOptions = {};
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] ?? "";
    const eq = arg.indexOf("=");
    const flag = eq >= 0 ? arg.slice(0, eq) : arg;
    const takeValue = (): string => {
      if (eq >= 0) return arg.slice(eq + 1);
      const value = args[i + 1];
      if (value === undefined || value.startsWith("--")) {
        throw new SandboxArgsError(`${flag} needs a value`);
      }
      i += 1;
      return value;
    };
    switch (flag) {
      case "--port": {
        const value = takeValue();
        const port = Number(value);
        if (!/^\d+$/.test(value) || port > 65535) {
          throw new SandboxArgsError(`--port must be an integer from 0 to 65535, got "${value}"`);
        }
        options.port = port;
        break;
      }
      case "--host": {
        const value = takeValue();
        if (value === "") throw new SandboxArgsError("--host must not be empty");
        options.host = value;
        break;
      }
      case "--seed": {
        const value = takeValue();
        if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
          throw new SandboxArgsError(`--seed must be an integer, got "${value}"`);
        }
        options.seed = Number(value);
        break;
      }
      case "--now": {
        const value = takeValue();
        try {
          parseNowOption(value);
        } catch {
          throw new SandboxArgsError(
            `--now must be an ISO 8601 date or date-time like 2024-06-15T12:00:00+09:00, got "${value}"`,
          );
        }
        options.now = value;
        break;
      }
      case "--job-seconds": {
        const value = takeValue();
        const seconds = Number(value);
        if (value.trim() === "" || !Number.isFinite(seconds) || seconds < 0 || seconds > 3600) {
          throw new SandboxArgsError(
            `--job-seconds must be a number from 0 to 3600, got "${value}"`,
          );
        }
        options.jobSeconds = seconds;
        break;
      }
      case "--csv-order":
        options.csvShape = { ...options.csvShape, order: oneOf(flag, takeValue(), CSV_ORDERS) };
        break;
      case "--csv-platform-ids":
        options.csvShape = {
          ...options.csvShape,
          platformIds: oneOf(flag, takeValue(), PLATFORM_ID_SHAPES),
        };
        break;
      case "--csv-customer-ids":
        options.csvShape = {
          ...options.csvShape,
          customerIds: oneOf(flag, takeValue(), CUSTOMER_ID_SHAPES),
        };
        break;
      case "--huge-ab-test":
        if (eq >= 0) throw new SandboxArgsError("--huge-ab-test takes no value");
        options.hugeAbTest = true;
        break;
      case "--data-dir": {
        const value = takeValue();
        if (value.trim() === "") throw new SandboxArgsError("--data-dir must not be empty");
        options.dataDir = value;
        break;
      }
      case "--help":
      case "-h":
        throw new SandboxArgsError("help");
      default:
        throw new SandboxArgsError(`Unknown argument "${arg}"`);
    }
  }
  return options;
}

/**
 * `crm-insights-mcp sandbox`: prints the SandboxInfo JSON as the first stdout line (contract),
 * logs on stderr, serves until SIGINT/SIGTERM, then closes and resolves 0.
 */
export async function runSandboxCommand(args: string[]): Promise<number> {
  let options: SandboxOptions;
  try {
    options = parseSandboxArgs(args);
  } catch (error) {
    if (!(error instanceof SandboxArgsError)) throw error;
    if (error.message === "help") {
      process.stderr.write(`${USAGE}\n`);
      return 0;
    }
    process.stderr.write(`crm-insights-mcp sandbox: ${error.message}\n${USAGE}\n`);
    return 2;
  }
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  try {
    sandbox = await startSandbox(options);
  } catch (error) {
    const message = listenFailure(error, options);
    if (message === undefined) throw error;
    process.stderr.write(`crm-insights-mcp sandbox: ${message}\n`);
    return 1;
  }
  process.stdout.write(`${JSON.stringify(sandbox.info)}\n`);

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
  });
  log.info("sandbox stopping", { signal });
  await sandbox.close();
  return 0;
}

/** A readable reason for a port that cannot be listened on, or undefined for other errors. */
function listenFailure(error: unknown, options: SandboxOptions): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const where = `${options.host ?? "127.0.0.1"}:${options.port ?? 0}`;
  if (code === "EADDRINUSE") {
    return `port ${options.port} is already in use (${where}); choose another port or --port 0 for a free one.`;
  }
  if (code === "EACCES") {
    return `no permission to listen on ${where}; use a port above 1023 or --port 0.`;
  }
  if (code === "EADDRNOTAVAIL") {
    return `cannot listen on ${where}: the host is not an address of this machine (try --host 127.0.0.1).`;
  }
  return undefined;
}
