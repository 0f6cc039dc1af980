import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  apiClientOptionsFromConfig,
  ConfigError,
  defaultDataDir,
  loadConfig,
  loadQuerySettings,
} from "../src/config.js";
import { must } from "./helpers/must.js";

const HOME = "/home/tester";
const load = (env: Record<string, string>) => loadConfig(env, { homeDir: HOME, platform: "linux" });
const remote = {
  CRM_BASE_URL: "https://api.example.com/",
  CRM_APPLICATION_ID: "app-1",
  CRM_SECRET_KEY: "sk-export",
};

function configError(env: Record<string, string>): string {
  try {
    load(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("defaults", () => {
  it("is sandbox mode with defaults when nothing is set", () => {
    const config = load({});
    expect(config).toEqual({
      mode: "sandbox",
      baseUrl: undefined,
      realtimeBaseUrl: undefined,
      applicationId: undefined,
      secretKey: undefined,
      recommendSecretKey: undefined,
      timeZone: "Asia/Seoul",
      dataDir: join(HOME, ".local", "share", "crm-insights-mcp"),
      downloadHosts: undefined,
      pollIntervalSeconds: 5,
      exportBudget: { count: 10, windowSeconds: 600 },
      productCatalogPath: undefined,
      maxDownloadBytes: 2048 * 1024 * 1024,
      sandbox: { seed: 42, now: undefined, jobSeconds: 3 },
      logLevel: "info",
      resultMaxTokens: 8000,
      metricsCallSeconds: 90,
      retention: { maxAgeDays: 30, maxBytes: 4096 * 1024 * 1024 },
      query: { memoryMb: 1024, threads: 2, timeoutSeconds: 60 },
      readDirs: [],
      readRoots: false,
      history: { enabled: true, keepDays: 400 },
    });
  });

  it("remote mode: trailing slash trimmed, realtime and recommend key default to the others", () => {
    const config = load(remote);
    expect(config.mode).toBe("remote");
    expect(config.baseUrl).toBe("https://api.example.com");
    expect(config.realtimeBaseUrl).toBe("https://api.example.com");
    expect(config.recommendSecretKey).toBe("sk-export");
  });

  it("data dir follows each platform's convention", () => {
    expect(defaultDataDir({ XDG_DATA_HOME: "/x" }, { homeDir: HOME, platform: "linux" })).toBe(
      "/x/crm-insights-mcp",
    );
    expect(defaultDataDir({}, { homeDir: HOME, platform: "darwin" })).toBe(
      join(HOME, "Library", "Application Support", "crm-insights-mcp"),
    );
    expect(defaultDataDir({ LOCALAPPDATA: "C:\\L" }, { homeDir: HOME, platform: "win32" })).toBe(
      join("C:\\L", "crm-insights-mcp"),
    );
  });
});

describe("every variable", () => {
  it("reads good values", () => {
    const config = load({
      ...remote,
      CRM_REALTIME_BASE_URL: "https://rt.example.com",
      CRM_RECOMMEND_SECRET_KEY: "sk-recommend",
      CRM_TIME_ZONE: "America/New_York",
      CRM_DATA_DIR: "~/crm-data",
      CRM_DOWNLOAD_HOSTS: " Files.example.com , cdn.example.com ,",
      CRM_POLL_INTERVAL_SECONDS: "7.5",
      CRM_EXPORT_BUDGET: "3 / 60",
      CRM_PRODUCT_CATALOG: "/data/products.csv",
      CRM_MAX_DOWNLOAD_MB: "1.5",
      CRM_SANDBOX_SEED: "-7",
      CRM_SANDBOX_NOW: "2026-11-22T09:00:00+09:00",
      CRM_SANDBOX_JOB_SECONDS: "0",
      CRM_LOG_LEVEL: " Debug ",
    });
    expect(config).toMatchObject({
      realtimeBaseUrl: "https://rt.example.com",
      recommendSecretKey: "sk-recommend",
      timeZone: "America/New_York",
      dataDir: join(HOME, "crm-data"),
      downloadHosts: ["files.example.com", "cdn.example.com"],
      pollIntervalSeconds: 7.5,
      exportBudget: { count: 3, windowSeconds: 60 },
      productCatalogPath: "/data/products.csv",
      maxDownloadBytes: Math.floor(1.5 * 1024 * 1024),
      sandbox: { seed: -7, now: "2026-11-22T09:00:00+09:00", jobSeconds: 0 },
      logLevel: "debug",
    });
  });

  it.each<[string, Record<string, string>]>([
    ["CRM_BASE_URL", { CRM_BASE_URL: "not a url" }],
    ["CRM_BASE_URL", { ...remote, CRM_BASE_URL: "http://api.example.com" }],
    ["CRM_BASE_URL", { ...remote, CRM_BASE_URL: "https://api.example.com/?key=1" }],
    ["CRM_REALTIME_BASE_URL", { ...remote, CRM_REALTIME_BASE_URL: "ftp://rt.example.com" }],
    ["CRM_REALTIME_BASE_URL", { CRM_REALTIME_BASE_URL: "https://rt.example.com" }],
    ["CRM_APPLICATION_ID", { CRM_BASE_URL: remote.CRM_BASE_URL, CRM_SECRET_KEY: "k-1234567" }],
    ["CRM_SECRET_KEY", { CRM_BASE_URL: remote.CRM_BASE_URL, CRM_APPLICATION_ID: "a" }],
    ["CRM_SECRET_KEY", { ...remote, CRM_SECRET_KEY: "two words" }],
    ["CRM_RECOMMEND_SECRET_KEY", { ...remote, CRM_RECOMMEND_SECRET_KEY: "a\u0007b" }],
    ["CRM_SECRET_KEY", { ...remote, CRM_SECRET_KEY: "abc" }],
    ["CRM_RECOMMEND_SECRET_KEY", { ...remote, CRM_RECOMMEND_SECRET_KEY: "1234567" }],
    ["CRM_SECRET_KEY", { CRM_SECRET_KEY: "short" }],
    ["CRM_LOG_LEVEL", { CRM_LOG_LEVEL: "verbose" }],
    ["CRM_TIME_ZONE", { CRM_TIME_ZONE: "Mars/Olympus" }],
    ["CRM_DATA_DIR", { CRM_DATA_DIR: "relative/dir" }],
    ["CRM_DOWNLOAD_HOSTS", { CRM_DOWNLOAD_HOSTS: "https://files.example.com/x" }],
    ["CRM_DOWNLOAD_HOSTS", { CRM_DOWNLOAD_HOSTS: "files.example.com:8443" }],
    ["CRM_POLL_INTERVAL_SECONDS", { CRM_POLL_INTERVAL_SECONDS: "fast" }],
    ["CRM_POLL_INTERVAL_SECONDS", { CRM_POLL_INTERVAL_SECONDS: "0" }],
    ["CRM_POLL_INTERVAL_SECONDS", { ...remote, CRM_POLL_INTERVAL_SECONDS: "1" }],
    ["CRM_EXPORT_BUDGET", { CRM_EXPORT_BUDGET: "10 per 600" }],
    ["CRM_EXPORT_BUDGET", { CRM_EXPORT_BUDGET: "0/600" }],
    ["CRM_MAX_DOWNLOAD_MB", { CRM_MAX_DOWNLOAD_MB: "-1" }],
    ["CRM_SANDBOX_SEED", { CRM_SANDBOX_SEED: "1.5" }],
    ["CRM_SANDBOX_NOW", { CRM_SANDBOX_NOW: "1" }],
    ["CRM_SANDBOX_NOW", { CRM_SANDBOX_NOW: "next tuesday" }],
    ["CRM_SANDBOX_JOB_SECONDS", { CRM_SANDBOX_JOB_SECONDS: "-3" }],
  ])("%s: a bad value names the variable and gives an example (%o)", (name, env) => {
    const message = configError(env);
    expect(message).toContain(`${name}:`);
    expect(message).toContain(`Example of a good value: `);
    expect(message).toMatch(/Example of a good value: CRM_[A-Z_]+=\S/);
  });

  it("a blank value means unset", () => {
    const config = load({ CRM_PRODUCT_CATALOG: "", CRM_LOG_LEVEL: " ", CRM_TIME_ZONE: "" });
    expect(config.productCatalogPath).toBeUndefined();
    expect(config.logLevel).toBe("info");
    expect(config.timeZone).toBe("Asia/Seoul");
  });

  it("a key too short to be redacted safely is refused with its length rule", () => {
    const message = configError({ ...remote, CRM_SECRET_KEY: "abc" });
    expect(message).toContain(
      "CRM_SECRET_KEY: is too short to be a secret key (at least 8 characters)",
    );
    expect(message).not.toContain("abc");
    expect(load({ ...remote, CRM_SECRET_KEY: "12345678" }).secretKey).toBe("12345678");
  });

  it("lists every bad variable at once", () => {
    const message = configError({ CRM_TIME_ZONE: "Nope", CRM_SANDBOX_SEED: "x" });
    expect(message).toContain("CRM_TIME_ZONE:");
    expect(message).toContain("CRM_SANDBOX_SEED:");
  });

  it("polls faster than 5 s only against loopback API hosts", () => {
    const config = load({
      ...remote,
      CRM_BASE_URL: "http://127.0.0.1:8080",
      CRM_POLL_INTERVAL_SECONDS: "0.5",
    });
    expect(config.pollIntervalSeconds).toBe(0.5);
    expect(config.baseUrl).toBe("http://127.0.0.1:8080");
  });

  it("never puts a secret key into the error text", () => {
    const message = configError({ ...remote, CRM_SECRET_KEY: "sk secret-with-space" });
    expect(message).not.toContain("secret-with-space");
  });
});

describe("apiClientOptionsFromConfig", () => {
  it("maps remote config to client options", () => {
    const config = load({
      ...remote,
      CRM_DOWNLOAD_HOSTS: "files.example.com",
      CRM_DATA_DIR: "/data",
      CRM_MAX_DOWNLOAD_MB: "1",
    });
    expect(apiClientOptionsFromConfig(config)).toMatchObject({
      baseUrl: "https://api.example.com",
      realtimeBaseUrl: "https://api.example.com",
      applicationId: "app-1",
      secretKey: "sk-export",
      recommendSecretKey: "sk-export",
      dataDir: "/data",
      downloadHosts: ["files.example.com"],
      maxDownloadBytes: 1024 * 1024,
    });
  });

  it("in sandbox mode takes the sandbox's URLs and keys as overrides", () => {
    const config = load({});
    expect(() => apiClientOptionsFromConfig(config)).toThrow(ConfigError);
    const options = apiClientOptionsFromConfig(config, {
      baseUrl: "http://127.0.0.1:4000",
      realtimeBaseUrl: "http://127.0.0.1:4000",
      applicationId: "sandbox-app",
      secretKey: "sbx-secret",
      recommendSecretKey: "sbx-recommend",
    });
    expect(options).toMatchObject({
      baseUrl: "http://127.0.0.1:4000",
      applicationId: "sandbox-app",
      secretKey: "sbx-secret",
      recommendSecretKey: "sbx-recommend",
      dataDir: config.dataDir,
    });
  });
});

describe("examples in error messages", () => {
  // Each variable with a value it refuses; the message's "Example of a good value" must then be
  // accepted as it stands (an example the check itself refuses sends users in a circle).
  const bad: Record<string, string> = {
    CRM_BASE_URL: "ftp://x",
    CRM_REALTIME_BASE_URL: "not a url",
    CRM_SECRET_KEY: "<export/metrics secret key>",
    CRM_RECOMMEND_SECRET_KEY: "<application secret key>",
    CRM_TIME_ZONE: "Korea/Seoul",
    CRM_DATA_DIR: "relative/path",
    CRM_DOWNLOAD_HOSTS: "https://files.example.com/x",
    CRM_POLL_INTERVAL_SECONDS: "soon",
    CRM_EXPORT_BUDGET: "10 per 10 minutes",
    CRM_MAX_DOWNLOAD_MB: "-1",
    CRM_SANDBOX_SEED: "1.5",
    CRM_SANDBOX_NOW: "yesterday",
    CRM_SANDBOX_JOB_SECONDS: "-3",
    CRM_LOG_LEVEL: "loud",
    CRM_RETENTION_DAYS: "a month",
    CRM_RETENTION_MB: "-5",
    CRM_RESULT_MAX_TOKENS: "lots",
    CRM_METRICS_CALL_SECONDS: "a minute",
    CRM_QUERY_MEMORY_MB: "64",
    CRM_QUERY_THREADS: "1.5",
    CRM_QUERY_TIMEOUT_SECONDS: "3600",
    CRM_HISTORY: "maybe",
    CRM_HISTORY_DAYS: "0",
  };
  for (const [name, value] of Object.entries(bad)) {
    it(`${name}: the suggested value is accepted`, () => {
      const message = configError({ ...remote, [name]: value });
      const example = new RegExp(`Example of a good value: ${name}=(\\S+)`).exec(message)?.[1];
      expect(example, message).toBeDefined();
      expect(() => load({ ...remote, [name]: example as string })).not.toThrow();
    });
  }

  it("the README's key placeholders are refused as placeholders, without their text echoed", () => {
    for (const placeholder of [
      "<your secret key>",
      "...",
      "YOUR_SECRET_KEY",
      // A VS Code input reference the client did not substitute.
      "$" + "{input:crm-secret}",
    ]) {
      const message = configError({ ...remote, CRM_SECRET_KEY: placeholder });
      expect(message).toContain("CRM_SECRET_KEY: is still a placeholder");
      expect(message).not.toContain(placeholder);
    }
  });

  it("reads the retention limits; 0 turns one off", () => {
    const config = load({ ...remote, CRM_RETENTION_DAYS: "7", CRM_RETENTION_MB: "0" });
    expect(config.retention).toEqual({ maxAgeDays: 7, maxBytes: 0 });
  });
});

describe("query engine limits", () => {
  it("reads memory, threads and timeout, and names a value out of range", () => {
    const config = load({
      ...remote,
      CRM_QUERY_MEMORY_MB: "2048",
      CRM_QUERY_THREADS: "4",
      CRM_QUERY_TIMEOUT_SECONDS: "5",
    });
    expect(config.query).toEqual({ memoryMb: 2048, threads: 4, timeoutSeconds: 5 });
    expect(configError({ ...remote, CRM_QUERY_THREADS: "0" })).toContain(
      "CRM_QUERY_THREADS: must be at least 1",
    );
    expect(() => loadQuerySettings({ CRM_QUERY_TIMEOUT_SECONDS: "0" })).toThrow(
      /CRM_QUERY_TIMEOUT_SECONDS: must be at least 1/,
    );
    expect(loadQuerySettings({ CRM_QUERY_MEMORY_MB: "256" }).query.memoryMb).toBe(256);
  });
});

describe("history", () => {
  it("CRM_HISTORY=off (any case) turns it off; CRM_HISTORY_DAYS sets the days kept", () => {
    expect(load({ ...remote, CRM_HISTORY: "OFF", CRM_HISTORY_DAYS: "90" }).history).toEqual({
      enabled: false,
      keepDays: 90,
    });
    expect(load({ ...remote, CRM_HISTORY: "on" }).history.enabled).toBe(true);
    expect(configError({ ...remote, CRM_HISTORY: "no" })).toContain(
      "CRM_HISTORY: must be on or off",
    );
    expect(configError({ ...remote, CRM_HISTORY_DAYS: "1.5" })).toContain(
      "CRM_HISTORY_DAYS: not an integer",
    );
    expect(loadQuerySettings({ CRM_HISTORY_DAYS: "30" }).history.keepDays).toBe(30);
  });
});

describe("MCP Bundle hosts", () => {
  it("an optional field left empty arrives as its literal placeholder and means unset", () => {
    const config = load({
      CRM_BASE_URL: "$" + "{user_config.base_url}",
      CRM_SECRET_KEY: "$" + "{user_config.secret_key}",
      CRM_DATA_DIR: "$" + "{user_config.data_dir}",
      CRM_TIME_ZONE: "Asia/Seoul",
    });
    expect(config.mode).toBe("sandbox");
    expect(config.secretKey).toBeUndefined();
    expect(config.dataDir).toBe(join(HOME, ".local", "share", "crm-insights-mcp"));
  });
});

describe("CRM_READ_DIRS and CRM_READ_ROOTS", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "crm-readdirs-config-"));
    await writeFile(join(dir, "a-file.csv"), "x\n");
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("reads existing absolute folders, trimmed, duplicates once, `~/` from the home folder", () => {
    const config = loadConfig(
      { CRM_READ_DIRS: ` ${dir} ,~,${dir}/`, CRM_READ_ROOTS: "1" },
      { homeDir: dir, platform: "linux" },
    );
    expect(config.readDirs).toEqual([dir]);
    expect(config.readRoots).toBe(true);
    for (const off of ["0", "off", "FALSE", ""]) {
      expect(load({ CRM_READ_ROOTS: off }).readRoots).toBe(false);
    }
    expect(load({ CRM_READ_ROOTS: "On" }).readRoots).toBe(true);
  });

  it("a relative path is a config error naming CRM_READ_DIRS, the entry and what to give", () => {
    const message = configError({ CRM_READ_DIRS: `${dir},Downloads` });
    expect(message).toContain(
      'CRM_READ_DIRS: "Downloads" is a relative path; give existing folders as absolute paths, separated by commas. Example of a good value: CRM_READ_DIRS=/home/me/Downloads',
    );
  });

  it("a missing folder, a file and an empty entry are named, all in one line", () => {
    const missing = join(dir, "never-made");
    const file = join(dir, "a-file.csv");
    const message = configError({ CRM_READ_DIRS: `${missing},,${file}` });
    const line = must(
      message.split("\n").find((l) => l.includes("CRM_READ_DIRS:")),
      "CRM_READ_DIRS line",
    );
    expect(line).toContain("it has an empty entry (two commas in a row, or one at an end)");
    expect(line).toContain(`${JSON.stringify(missing)} does not exist`);
    expect(line).toContain(`${JSON.stringify(file)} is not a folder`);
    expect(configError({ CRM_READ_DIRS: `${dir},` })).toContain(
      "CRM_READ_DIRS: it has an empty entry",
    );
  });

  it("CRM_READ_ROOTS takes 1 or 0", () => {
    expect(configError({ CRM_READ_ROOTS: "yes please" })).toContain(
      "CRM_READ_ROOTS: must be 1 (on) or 0 (off). Example of a good value: CRM_READ_ROOTS=1",
    );
  });
});
