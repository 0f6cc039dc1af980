import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderDoctor, runDoctor } from "../../src/doctor/doctor.js";
import { doctorEn } from "../../src/doctor/messages-en.js";
import { doctorKo } from "../../src/doctor/messages-ko.js";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox } from "../../src/sandbox/types.js";
import { englishWords } from "../report/visible-text.js";
import { childRunEnv } from "../setup/temp-folder.js";

/**
 * `doctor --lang ko`: the lines in Korean from doctor's catalogue; without it English; --json the
 * same English JSON whatever --lang says (the built bin, dist/cli.js, as a user runs it).
 */

const CLI = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));
const NOW = Date.parse("2026-11-20T01:30:00Z");
const WRONG = "wrong-doctor-lang-key-4d1e";

/** Code names a Korean line may hold: variables, commands, tools, protocols, the zone's names, units. */
const CODE_NAMES = [
  "CRM_BASE_URL",
  "CRM_APPLICATION_ID",
  "CRM_SECRET_KEY",
  "CRM_RECOMMEND_SECRET_KEY",
  "CRM_DATA_DIR",
  "CRM_TIME_ZONE",
  "CRM_RETENTION_DAYS",
  "CRM_RETENTION_MB",
  "CRM_REALTIME_BASE_URL",
  "CRM_READ_DIRS",
  "CRM_READ_ROOTS",
  "summarize_export",
  "query_export",
  "MCP",
  "stdio",
  "HTTP",
  "IANA",
  "Asia",
  "Seoul",
  "UTC",
  "URL",
  "crm-insights-mcp",
  "doctor",
  "B",
  "KB",
  "MB",
];

let sandbox: RunningSandbox;
let dataDir: string;
let remote: Record<string, string>;
beforeAll(async () => {
  sandbox = await startSandbox({ jobSeconds: 0 });
  dataDir = await mkdtemp(join(tmpdir(), "crm-doctor-lang-"));
  remote = {
    CRM_BASE_URL: sandbox.base_url,
    CRM_APPLICATION_ID: sandbox.application_id,
    CRM_SECRET_KEY: sandbox.secret_key,
    CRM_RECOMMEND_SECRET_KEY: sandbox.recommend_secret_key,
    CRM_DATA_DIR: dataDir,
  };
});
afterAll(async () => {
  await sandbox?.close();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

function cli(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [CLI, "doctor", ...args],
      {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME ?? "/tmp",
          ...childRunEnv(),
          ...env,
        },
        timeout: 30_000,
      },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr });
      },
    );
  });
}

/** Words of the values the lines name: URLs, the application's ID, the data folder. */
function valueWords(env: Record<string, string>): string[] {
  return Object.values(env).flatMap((v) => v.match(/_?[A-Za-z][A-Za-z0-9_-]*/g) ?? []);
}

type Tree = { [key: string]: unknown };
function shape(tree: Tree, prefix = ""): string[] {
  return Object.entries(tree)
    .flatMap(([key, value]) =>
      typeof value === "object" && value !== null
        ? shape(value as Tree, `${prefix}${key}.`)
        : [`${prefix}${key}: ${typeof value}`],
    )
    .sort();
}

describe("doctor in Korean", () => {
  it("the catalogues have the same keys", () => {
    expect(shape(doctorKo)).toEqual(shape(doctorEn));
  });

  it("every line in Korean, passing and failing, with no English word but names and values", async () => {
    const passing = await runDoctor(remote, { now: () => NOW, lang: "ko", probeTimeoutMs: 5_000 });
    const text = renderDoctor(passing, "ko");
    const lines = text.trimEnd().split("\n");
    expect(lines.map((l) => l.split(":")[0])).toEqual([
      "통과  설정",
      "통과  데이터 폴더",
      "통과  읽는 폴더",
      "통과  시간대",
      "통과  내보내기·성과 키",
      "통과  추천 키",
      expect.stringMatching(/^모든 검사를 통과했습니다/),
    ]);
    expect(text).toContain("Asia/Seoul, 기본값 (서비스 콘솔의");
    expect(text).toContain("현재 2026-11-20 10:30 (UTC+09:00)");
    const failing = await runDoctor(
      { ...remote, CRM_SECRET_KEY: WRONG, CRM_RECOMMEND_SECRET_KEY: WRONG },
      { now: () => NOW, lang: "ko", probeTimeoutMs: 5_000 },
    );
    const failed = renderDoctor(failing, "ko");
    expect(failed).toMatch(/^실패 {2}내보내기·성과 키: .*CRM_SECRET_KEY의 키를 거부했습니다/m);
    expect(failed).toMatch(/^일부 검사가 실패했습니다/m);
    expect(failed).not.toContain(WRONG);
    for (const t of [text, failed]) {
      expect(englishWords(t, [...CODE_NAMES, ...valueWords(remote)])).toEqual([]);
    }
    // The same run in English: the words differ, the outcome and the checks do not.
    const english = await runDoctor(remote, { now: () => NOW, probeTimeoutMs: 5_000 });
    expect(english.checks.map((c) => [c.name, c.ok])).toEqual(
      passing.checks.map((c) => [c.name, c.ok]),
    );
    expect(renderDoctor(english)).toMatch(/^ok {4}config: remote mode: /);
  });

  it("the bin: --lang ko prints Korean lines; --json is the same English JSON with or without it", async () => {
    const korean = await cli(["--lang", "ko"], remote);
    expect(korean.code, korean.stderr).toBe(0);
    expect(korean.stdout).toMatch(/^통과 {2}설정: 원격 모드: /);
    const english = await cli([], remote);
    expect(english.stdout).toMatch(/^ok {4}config: remote mode: /);
    const json = await cli(["--json"], remote);
    const jsonKo = await cli(["--json", "--lang", "ko"], remote);
    expect(jsonKo.code).toBe(0);
    // Two runs a moment apart: only the time zone check's clock may differ.
    const clockless = (s: string) => s.replace(/now \d{4}-\d\d-\d\d \d\d:\d\d/, "now <clock>");
    expect(clockless(jsonKo.stdout)).toBe(clockless(json.stdout));
    expect(JSON.parse(jsonKo.stdout).checks[0].detail).toMatch(/^remote mode: /);
    const wrong = await cli(["--lang", "fr"], remote);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('doctor: --lang takes ko or en (got "fr").');
  });
});
