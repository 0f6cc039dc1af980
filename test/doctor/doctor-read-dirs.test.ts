import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { renderDoctor, runDoctor } from "../../src/doctor/doctor.js";
import { doctorEn } from "../../src/doctor/messages-en.js";
import { doctorKo } from "../../src/doctor/messages-ko.js";
import { checkReadableFolders } from "../../src/doctor/readable-folders.js";
import { must } from "../helpers/must.js";
import { englishWords } from "../report/visible-text.js";

/**
 * doctor's "readable folders" line: the folders summarize_export and query_export read (the data
 * folder, CRM_READ_DIRS, whether a stdio client's roots count), in English and Korean; a folder
 * that cannot be read fails the check, and a bad CRM_READ_DIRS fails the configuration.
 */

/** Names a Korean line may hold: tools, variables, protocols. */
const CODE_NAMES = [
  "summarize_export",
  "query_export",
  "CRM_READ_DIRS",
  "CRM_READ_ROOTS",
  "MCP",
  "stdio",
  "HTTP",
];

let dataDir: string;
let downloads: string;
let shared: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "crm-doctor-readdirs-"));
  downloads = await mkdtemp(join(tmpdir(), "crm-doctor-downloads-"));
  shared = await mkdtemp(join(tmpdir(), "crm-doctor-shared-"));
});
afterAll(async () => {
  for (const folder of [dataDir, downloads, shared]) {
    if (folder !== undefined) await rm(folder, { recursive: true, force: true });
  }
});

/** The words of the paths a line names (values, not words of ours). */
function words(paths: string[]): string[] {
  return paths.join(" ").match(/_?[A-Za-z][A-Za-z0-9_-]*/g) ?? [];
}

/** The line of the check named `name` in doctor's text. */
function line(text: string, name: string): string {
  return must(
    text.split("\n").find((l) => l.includes(`${name}: `)),
    `line ${name}`,
  );
}

describe("doctor: readable folders", () => {
  it("lists the data folder and CRM_READ_DIRS, and says when the client's roots count", async () => {
    const env = {
      CRM_DATA_DIR: dataDir,
      CRM_READ_DIRS: `${downloads},${shared}`,
      CRM_READ_ROOTS: "1",
    };
    const english = await runDoctor(env, { probeTimeoutMs: 10_000 });
    const en = line(renderDoctor(english), "readable folders");
    expect(en).toBe(
      `ok    readable folders: summarize_export and query_export read files in the data folder (${join(dataDir, "sandbox")}) and ${downloads}, ${shared} (CRM_READ_DIRS); over stdio also the folders the client offers as MCP roots (CRM_READ_ROOTS), never over HTTP.`,
    );
    const korean = await runDoctor(env, { probeTimeoutMs: 10_000, lang: "ko" });
    const ko = line(renderDoctor(korean, "ko"), "읽는 폴더");
    expect(ko.startsWith("통과  읽는 폴더: summarize_export와 query_export는 데이터 폴더(")).toBe(
      true,
    );
    expect(ko).toContain(`${downloads}, ${shared} (CRM_READ_DIRS)`);
    expect(ko).toContain("MCP 루트");
    const paths = [join(dataDir, "sandbox"), downloads, shared];
    expect(englishWords(ko, [...CODE_NAMES, ...words(paths)])).toEqual([]);
  });

  it("without them: the data folder only, and how to add a folder", async () => {
    const config = loadConfig({ CRM_DATA_DIR: dataDir });
    for (const [m, expected] of [
      [doctorEn, "add it to CRM_READ_DIRS (absolute folders, comma-separated)"],
      [doctorKo, "CRM_READ_DIRS에 추가하세요 (절대 경로, 쉼표로 구분)"],
    ] as const) {
      const check = await checkReadableFolders(config, m);
      expect(check.ok).toBe(true);
      expect(check.detail).toContain(join(dataDir, "sandbox"));
      expect(check.detail).toContain(expected);
      expect(check.detail).not.toContain("CRM_READ_ROOTS");
    }
    const ko = (await checkReadableFolders(config, doctorKo)).detail;
    expect(englishWords(ko, [...CODE_NAMES, ...words([join(dataDir, "sandbox")])])).toEqual([]);
  });

  it("a listed folder gone since start-up fails the check and names it", async () => {
    const gone = await mkdtemp(join(tmpdir(), "crm-doctor-gone-"));
    const config = loadConfig({ CRM_DATA_DIR: dataDir, CRM_READ_DIRS: gone });
    await rm(gone, { recursive: true });
    const check = await checkReadableFolders(config, doctorEn);
    expect(check).toEqual({
      name: "readable folders",
      ok: false,
      detail: `${gone} (CRM_READ_DIRS) cannot be read (ENOENT); fix its permissions or remove it from CRM_READ_DIRS.`,
    });
    const ko = await checkReadableFolders(config, doctorKo);
    expect(ko.detail).toBe(
      `${gone} (CRM_READ_DIRS): 읽을 수 없습니다 (ENOENT). 권한을 고치거나 CRM_READ_DIRS에서 빼세요.`,
    );
  });

  it("a relative CRM_READ_DIRS fails the configuration check, naming the variable", async () => {
    const report = await runDoctor({ CRM_DATA_DIR: dataDir, CRM_READ_DIRS: "Downloads" });
    expect(report.ok).toBe(false);
    expect(report.checks).toHaveLength(1);
    expect(report.checks[0]?.name).toBe("config");
    expect(report.checks[0]?.detail).toContain('CRM_READ_DIRS: "Downloads" is a relative path');
  });
});
