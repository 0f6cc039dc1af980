import { ConfigError, defaultDataDir, loadConfig } from "../config.js";
import { dataFolderInUse } from "../files/data-folder.js";
import { renderDoctor, runDoctor } from "./doctor.js";

/** `crm-insights-mcp doctor [--json]`: exit 0 when every check passes, 1 otherwise, 2 on bad usage. */
export async function runDoctorCommand(args: readonly string[]): Promise<number> {
  const unknown = args.filter((a) => a !== "--json");
  if (unknown.length > 0) {
    process.stderr.write(
      `doctor: unknown argument "${unknown[0]}".\nUsage: crm-insights-mcp doctor [--json]\n`,
    );
    return 2;
  }
  const report = await runDoctor(process.env);
  process.stdout.write(
    args.includes("--json") ? `${JSON.stringify(report, null, 2)}\n` : renderDoctor(report),
  );
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
