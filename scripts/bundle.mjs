// `npm run bundle`: one MCP Bundle (.mcpb) per platform, which Claude Desktop and other MCPB hosts
// install with one click: the built package (what `npm pack` ships) plus the only packages the
// built bin loads from node_modules (DuckDB, scripts/lib/bin-externals.mjs: the rest is bundled
// into dist/) with exactly that platform's DuckDB binding (a native addon: a bundle carries no
// compiler and cannot fetch one), and a manifest whose `compatibility.platforms` names only that
// platform and whose user_config asks for the service's URLs, application ID, keys (stored by
// the host as secrets), time zone and data folder. Validated and packed by @anthropic-ai/mcpb's
// own tools. Expects dist/ built (the npm script builds first).
//   node scripts/bundle.mjs [--out-dir DIR] [--platform darwin-arm64,linux-x64,...]
//   writes DIR/crm-insights-mcp-<platform>-<arch>.mcpb (default DIR: bundle/) and prints one JSON
//   line per bundle: { bundle, platform, bytes, files, unpacked_bytes }.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { BIN_EXTERNAL_PACKAGES } from "./lib/bin-externals.mjs";
import { nativeBinaryPlatform } from "./lib/native-binary.mjs";

const run = promisify(execFile);

/** The platforms DuckDB publishes bindings for that MCPB hosts run on. */
const PLATFORMS = [
  { os: "darwin", cpu: "arm64" },
  { os: "darwin", cpu: "x64" },
  { os: "win32", cpu: "x64" },
  { os: "linux", cpu: "x64", libc: "glibc" },
  { os: "linux", cpu: "arm64", libc: "glibc" },
];
const NAMES = { darwin: "macOS", win32: "Windows", linux: "Linux" };
const SHARED_LIBRARY = { darwin: "libduckdb.dylib", win32: "duckdb.dll", linux: "libduckdb.so" };

const root = fileURLToPath(new URL("..", import.meta.url));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

async function main() {
  const outDir = resolve(option("--out-dir") ?? join(root, "bundle"));
  const wanted = option("--platform")?.split(",");
  const targets =
    wanted === undefined ? PLATFORMS : wanted.map((name) => platformNamed(name.trim()));
  if (!existsSync(join(root, "dist", "cli.js"))) {
    throw new Error("dist/cli.js is missing: run npm run build first (npm run bundle does).");
  }
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const { TOOLS } = await import(new URL("../dist/tools/index.js", import.meta.url).href);

  const work = mkdtempSync(join(tmpdir(), "crm-bundle-"));
  try {
    // Exactly the files the npm package ships (package.json "files"), via npm pack.
    const { stdout } = await run(
      npm,
      ["pack", "--ignore-scripts", "--json", "--pack-destination", work],
      { cwd: root, maxBuffer: 64 * 1024 * 1024 },
    );
    const packed = JSON.parse(stdout)[0].filename;
    const stage = join(work, "stage");
    mkdirSync(stage);
    await run("tar", ["-xzf", join(work, packed), "-C", stage, "--strip-components=1"]);
    cpSync(join(root, "package-lock.json"), join(stage, "package-lock.json"));

    mkdirSync(outDir, { recursive: true });
    // The platforms are built side by side: each one's time is mostly npm and zip compression
    // in child processes.
    const results = await inPool(targets, Math.min(2, availableParallelism()), (target) =>
      bundleFor(target, { pkg, tools: TOOLS, stage, work, outDir }),
    );
    if (wanted === undefined) {
      // A bundle of an earlier layout (one for every platform) would be installed by mistake.
      const made = new Set(results.map((r) => r.file));
      for (const name of readdirSync(outDir)) {
        if (/^crm-insights-mcp.*\.mcpb$/.test(name) && !made.has(name)) rmSync(join(outDir, name));
      }
    }
    for (const result of results) {
      const { file: _file, ...line } = result;
      console.log(JSON.stringify(line));
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function option(name) {
  const index = process.argv.indexOf(name);
  return index > 0 ? process.argv[index + 1] : undefined;
}

function platformName(target) {
  return `${target.os}-${target.cpu}`;
}

function platformNamed(name) {
  const target = PLATFORMS.find((p) => platformName(p) === name);
  if (target === undefined) {
    throw new Error(
      `Unknown platform ${name}: expected one of ${PLATFORMS.map(platformName).join(", ")}.`,
    );
  }
  return target;
}

function bundleFileName(target) {
  return `crm-insights-mcp-${platformName(target)}.mcpb`;
}

async function bundleFor(target, { pkg, tools, stage, work, outDir }) {
  const name = platformName(target);
  const dir = join(work, name);
  cpSync(stage, dir, { recursive: true });
  await installDependencies(dir, target);
  keepOnlyLoadedPackages(join(dir, "node_modules"));
  rmSync(join(dir, "package-lock.json"));
  writeFileSync(join(dir, ".mcpbignore"), MCPB_IGNORE);
  checkBinding(dir, target);

  writeFileSync(
    join(dir, "manifest.json"),
    `${JSON.stringify(manifestFor(pkg, tools, target), null, 2)}\n`,
  );
  // The official validator and packer (they refuse a manifest that does not fit the schema).
  const mcpb = join(root, "node_modules", "@anthropic-ai", "mcpb", "dist", "cli", "cli.js");
  await run(process.execPath, [mcpb, "validate", join(dir, "manifest.json")]);
  const file = bundleFileName(target);
  const out = join(outDir, file);
  rmSync(out, { force: true });
  await run(process.execPath, [mcpb, "pack", dir, out], { maxBuffer: 64 * 1024 * 1024 });
  if (!existsSync(out)) throw new Error(`mcpb pack did not write ${out}`);
  rmSync(dir, { recursive: true, force: true });
  const zip = readFileSync(out);
  const { files, bytes } = zipContents(zip);
  return { file, bundle: out, platform: name, bytes: zip.length, files, unpacked_bytes: bytes };
}

/**
 * Production dependencies at the lockfile's versions, with the optional native packages of the
 * target platform instead of this machine's (npm's --os/--cpu/--libc); no install scripts run.
 * Each platform's install is kept under node_modules/.cache for the lockfile it came from, so a
 * second run (the test suite on another Node version, a rebuilt bundle) copies it instead.
 */
async function installDependencies(dir, target) {
  const lock = readFileSync(join(dir, "package-lock.json"));
  const key = createHash("sha256").update(lock).digest("hex").slice(0, 16);
  const cacheRoot = join(root, "node_modules", ".cache", "crm-insights-mcp", "bundle-installs");
  const cached = join(cacheRoot, `${platformName(target)}-${key}`);
  if (existsSync(join(cached, "node_modules"))) {
    cpSync(join(cached, "node_modules"), join(dir, "node_modules"), { recursive: true });
    return;
  }
  const platformFlags = [`--os=${target.os}`, `--cpu=${target.cpu}`];
  if (target.libc !== undefined) platformFlags.push(`--libc=${target.libc}`);
  await run(
    npm,
    [
      "ci",
      "--omit=dev",
      "--ignore-scripts",
      "--no-audit",
      "--no-fund",
      "--prefer-offline",
      ...platformFlags,
    ],
    { cwd: dir, maxBuffer: 64 * 1024 * 1024 },
  );
  // Written beside, then renamed: an interrupted copy is never taken for a finished one.
  mkdirSync(cacheRoot, { recursive: true });
  for (const old of readdirSync(cacheRoot)) {
    if (old.startsWith(`${platformName(target)}-`)) {
      rmSync(join(cacheRoot, old), { recursive: true, force: true });
    }
  }
  const partial = `${cached}.partial-${process.pid}`;
  cpSync(join(dir, "node_modules"), join(partial, "node_modules"), { recursive: true });
  renameSync(partial, cached);
}

/**
 * Removes every installed package the built bin never loads: all but BIN_EXTERNAL_PACKAGES and
 * what they depend on, resolved as Node resolves it (a package's own node_modules first, then
 * the top level). Production dependencies bundled into dist/ and optional peers npm installs
 * anyway (react-dom, for ext-apps' React helpers) go. So does npm's record of the whole install.
 */
function keepOnlyLoadedPackages(nodeModules) {
  const keep = new Set();
  const visit = (packageDir) => {
    const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
    const wanted = {
      ...manifest.dependencies,
      ...manifest.optionalDependencies,
      ...manifest.peerDependencies,
    };
    for (const name of Object.keys(wanted)) {
      const nested = join(packageDir, "node_modules", name);
      if (existsSync(nested)) {
        visit(nested);
      } else if (existsSync(join(nodeModules, name)) && !keep.has(name)) {
        keep.add(name);
        visit(join(nodeModules, name));
      }
    }
  };
  for (const name of BIN_EXTERNAL_PACKAGES) {
    if (!existsSync(join(nodeModules, name))) {
      throw new Error(`${name}, which the built bin loads, was not installed.`);
    }
    keep.add(name);
    visit(join(nodeModules, name));
  }
  for (const entry of readdirSync(nodeModules)) {
    const names = entry.startsWith("@")
      ? readdirSync(join(nodeModules, entry)).map((n) => `${entry}/${n}`)
      : [entry];
    for (const name of names) {
      if (!keep.has(name)) rmSync(join(nodeModules, name), { recursive: true, force: true });
    }
    if (entry.startsWith("@") && readdirSync(join(nodeModules, entry)).length === 0) {
      rmSync(join(nodeModules, entry), { recursive: true });
    }
  }
}

/**
 * Dependencies' type declarations, TypeScript sources and documentation (licences stay): never
 * loaded at run time, a third of the files. mcpb pack already leaves out *.d.ts and source maps.
 */
const MCPB_IGNORE = `node_modules/**/*.d.cts
node_modules/**/*.d.mts
node_modules/**/*.ts
node_modules/**/*.md
!node_modules/**/LICEN[CS]E*
`;

/**
 * Exactly one DuckDB binding, the target's, built for the target (its addon and library headers
 * read): a wrong or missing one would only show when a user's first query fails to load it.
 */
function checkBinding(dir, target) {
  const scope = join(dir, "node_modules", "@duckdb");
  const bindings = readdirSync(scope).filter((n) => n.startsWith("node-bindings-"));
  const expected = `node-bindings-${platformName(target)}`;
  if (bindings.length !== 1 || bindings[0] !== expected) {
    throw new Error(
      `The ${platformName(target)} bundle holds DuckDB bindings [${bindings.join(", ")}], not exactly @duckdb/${expected}.`,
    );
  }
  for (const file of ["duckdb.node", SHARED_LIBRARY[target.os]]) {
    const path = join(scope, expected, file);
    const found = nativeBinaryPlatform(path);
    if (found.os !== target.os || !found.cpus.includes(target.cpu)) {
      throw new Error(
        `${path} is built for ${found.os} ${found.cpus.join("+")}, not ${platformName(target)}.`,
      );
    }
  }
}

/** Files and their unpacked bytes, from the zip's central directory. */
function zipContents(zip) {
  let end = zip.length - 22;
  while (end >= 0 && zip.readUInt32LE(end) !== 0x06054b50) end--;
  if (end < 0) throw new Error("not a zip file: no end of central directory");
  const entries = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  let files = 0;
  let bytes = 0;
  for (let i = 0; i < entries; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error("corrupt zip central directory");
    const size = zip.readUInt32LE(at + 24);
    const nameLength = zip.readUInt16LE(at + 28);
    const name = zip.toString("utf8", at + 46, at + 46 + nameLength);
    if (!name.endsWith("/")) {
      files++;
      bytes += size;
    }
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return { files, bytes };
}

async function inPool(items, size, work) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker));
  return results;
}

/** The host fills `${user_config.KEY}` in with what the user entered. */
function userConfig(key) {
  return `\${user_config.${key}}`;
}

/** Manifest 0.3: https://github.com/modelcontextprotocol/mcpb/blob/main/MANIFEST.md */
function manifestFor(pkg, tools, target) {
  // An optional field the user leaves blank reaches the server as the literal `${user_config.x}`
  // in some hosts; the server's config reads that as unset (see config.ts).
  const env = {
    CRM_BASE_URL: userConfig("base_url"),
    CRM_REALTIME_BASE_URL: userConfig("realtime_base_url"),
    CRM_APPLICATION_ID: userConfig("application_id"),
    CRM_SECRET_KEY: userConfig("secret_key"),
    CRM_RECOMMEND_SECRET_KEY: userConfig("recommend_secret_key"),
    CRM_TIME_ZONE: userConfig("time_zone"),
    CRM_DATA_DIR: userConfig("data_dir"),
  };
  const cpu = target.cpu === "arm64" && target.os === "darwin" ? "Apple silicon" : target.cpu;
  return {
    manifest_version: "0.3",
    name: pkg.name,
    display_name: "CRM Insights",
    version: pkg.version,
    description: pkg.description,
    long_description: `Campaign metrics, campaign raw-event (CSV) and scenario daily-metric (XLSX) exports with waiting, downloading and summarizing, SQL over exports, and product recommendations, for a Korean messaging and recommendation service. Leave the service fields empty to try everything on the embedded sandbox (synthetic data, no keys). This bundle is for ${NAMES[target.os]} on ${cpu} (${platformName(target)}); other platforms have bundles of their own.`,
    author: { name: "crm-insights-mcp contributors" },
    license: pkg.license,
    keywords: pkg.keywords,
    ...(pkg.repository?.url
      ? { repository: { type: "git", url: pkg.repository.url.replace(/^git\+/, "") } }
      : {}),
    server: {
      type: "node",
      entry_point: "dist/cli.js",
      mcp_config: { command: "node", args: [`\${__dirname}/dist/cli.js`], env },
    },
    tools: tools.map((t) => ({ name: t.name, description: t.description.split("\n")[0] })),
    compatibility: {
      // The manifest names operating systems only; the CPU is in the file name and above.
      platforms: [target.os],
      runtimes: { node: pkg.engines.node },
    },
    user_config: {
      base_url: {
        type: "string",
        title: "Service base URL",
        description:
          "{base_url} of the export and metrics endpoints, e.g. https://api.example.com. Leave empty for the embedded sandbox (synthetic data).",
        required: false,
      },
      realtime_base_url: {
        type: "string",
        title: "Recommend base URL",
        description: "{realtime_base_url} of the recommend endpoint; empty: the service base URL.",
        required: false,
      },
      application_id: {
        type: "string",
        title: "Application ID",
        description: "Required with a service base URL.",
        required: false,
      },
      secret_key: {
        type: "string",
        title: "Export/metrics secret key",
        description: "The secret key the service's account manager issued (stored as a secret).",
        sensitive: true,
        required: false,
      },
      recommend_secret_key: {
        type: "string",
        title: "Recommend secret key",
        description:
          "The application's secret key for recommendations; empty: the export/metrics key.",
        sensitive: true,
        required: false,
      },
      time_zone: {
        type: "string",
        title: "Application time zone",
        description: "IANA time zone the application's dates are read in.",
        default: "Asia/Seoul",
        required: false,
      },
      data_dir: {
        type: "directory",
        title: "Data folder",
        description:
          "Where downloaded exports and the export-job ledger are kept; empty: the per-user data folder.",
        required: false,
      },
    },
  };
}

// Last, so every constant above is initialized when it runs.
await main();
