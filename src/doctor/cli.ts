import type { Lang } from "../analysis/i18n/lang.js";
import { ConfigError, defaultDataDir, loadConfig } from "../config.js";
import { dataFolderInUse } from "../files/data-folder.js";
import { renderDoctor, runDoctor } from "./doctor.js";

const USAGE = "Usage: crm-insights-mcp doctor [--json] [--lang ko|en]\n";

/**
 * `crm-insights-mcp doctor [--json] [--lang ko|en]`: exit 0 when every check passes, 1 otherwise,
 * 2 on bad usage. The lines are English unless --lang ko; --json is English whatever --lang says,
 * so a script reads the same details.
 */
export async function runDoctorCommand(args: readonly string[]): Promise<number> {
  let json = false;
  let lang: Lang = "en";
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--json") json = true;
    else if (arg === "--lang") {
      const value = args[++i];
      if (value !== "ko" && value !== "en") {
        const got = value === undefined ? "" : ` (got ${JSON.stringify(value)})`;
        process.stderr.write(`doctor: --lang takes ko or en${got}.\n${USAGE}`);
        return 2;
      }
      lang = value;
    } else {
      process.stderr.write(`doctor: unknown argument "${arg}".\n${USAGE}`);
      return 2;
    }
  }
  if (json) {
    const report = await runDoctor(process.env);
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return report.ok ? 0 : 1;
  }
  const report = await runDoctor(process.env, { lang });
  process.stdout.write(renderDoctor(report, lang));
  return report.ok ? 0 : 1;
}

/** The `--help` line that says where files go with the current environment. */
export function dataFolderLine(env: NodeJS.ProcessEnv): string {
  try {
    const config = loadConfig(env);
    return `Data folder in use: ${dataFolderInUse(config)} (ledger and downloaded exports${config.mode === "sandbox" ? "; sandbox mode keeps its data in this sandbox/ part of CRM_DATA_DIR" : ""}).`;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return `Data folder: the configuration is invalid (run crm-insights-mcp doctor); by default ${defaultDataDir(env)}.`;
  }
}
