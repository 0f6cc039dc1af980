// `npm run bundle`: the MCP Bundle (.mcpb) that Claude Desktop and other MCPB hosts install with one
// click: the built package (what `npm pack` ships) plus its production dependencies, and a
// manifest whose user_config asks for the service's URLs, application ID, keys (stored by the
// host as secrets), time zone and data folder. Validated and packed by @anthropic-ai/mcpb's own
// tools. Expects dist/ built (the npm script builds first).
//   node scripts/bundle.mjs [--out FILE]   (default bundle/crm-insights-mcp.mcpb)
import { execFileSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const outIndex = process.argv.indexOf("--out");
const out = resolve(
  outIndex > 0 ? process.argv[outIndex + 1] : join(root, "bundle", "crm-insights-mcp.mcpb"),
);
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

if (!existsSync(join(root, "dist", "cli.js"))) {
  throw new Error("dist/cli.js is missing: run npm run build first (npm run bundle does).");
}
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

const work = mkdtempSync(join(tmpdir(), "crm-bundle-"));
try {
  // Exactly the files the npm package ships (package.json "files"), via npm pack.
  const packed = JSON.parse(
    execFileSync(npm, ["pack", "--ignore-scripts", "--json", "--pack-destination", work], {
      cwd: root,
      encoding: "utf8",
    }),
  )[0].filename;
  const stage = join(work, "stage");
  mkdirSync(stage);
  execFileSync("tar", ["-xzf", join(work, packed), "-C", stage, "--strip-components=1"]);
  // Production dependencies at the lockfile's versions; no install scripts run.
  cpSync(join(root, "package-lock.json"), join(stage, "package-lock.json"));
  execFileSync(
    npm,
    ["ci", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline"],
    { cwd: stage, stdio: ["ignore", "ignore", "inherit"] },
  );
  rmSync(join(stage, "package-lock.json"));

  const { TOOLS } = await import(new URL("../dist/tools/index.js", import.meta.url).href);
  const manifest = manifestFor(pkg, TOOLS);
  writeFileSync(join(stage, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);

  // The official validator and packer (they refuse a manifest that does not fit the schema).
  const mcpb = join(root, "node_modules", "@anthropic-ai", "mcpb", "dist", "cli", "cli.js");
  execFileSync(process.execPath, [mcpb, "validate", join(stage, "manifest.json")], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  mkdirSync(dirname(out), { recursive: true });
  rmSync(out, { force: true });
  execFileSync(process.execPath, [mcpb, "pack", stage, out], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (!existsSync(out)) throw new Error(`mcpb pack did not write ${out}`);
  console.log(
    JSON.stringify({
      bundle: out,
      bytes: statSync(out).size,
      version: pkg.version,
      tools: TOOLS.length,
    }),
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}

/** The host fills `${user_config.KEY}` in with what the user entered. */
function userConfig(key) {
  return `\${user_config.${key}}`;
}

/** Manifest 0.3: https://github.com/modelcontextprotocol/mcpb/blob/main/MANIFEST.md */
function manifestFor(pkg, tools) {
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
  return {
    manifest_version: "0.3",
    name: pkg.name,
    display_name: "CRM Insights",
    version: pkg.version,
    description: pkg.description,
    long_description:
      "Campaign metrics, campaign raw-event (CSV) and scenario daily-metric (XLSX) exports with waiting, downloading and summarizing, and product recommendations, for a Korean messaging and recommendation service. Leave the service fields empty to try everything on the embedded sandbox (synthetic data, no keys).",
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
      platforms: ["darwin", "win32", "linux"],
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
