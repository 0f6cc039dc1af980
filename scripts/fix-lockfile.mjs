// The registry mirror here carries only some platform builds of packages that ship native
// binaries (Biome's CLI, DuckDB's bindings); npm then leaves the others out of the lockfile and
// `npm ci` refuses it. Add them as optional, platform-limited entries (never fetched on this
// machine's platform).
import { readFileSync, writeFileSync } from "node:fs";

const path = process.argv[2];
const lock = JSON.parse(readFileSync(path, "utf8"));

const families = [
  {
    anchor: "node_modules/@biomejs/biome",
    scope: "node_modules/@biomejs/",
    extra: { dev: true, license: "MIT OR Apache-2.0", engines: { node: ">=14.21.3" } },
    platforms: {
      "cli-android-arm64": { os: ["android"], cpu: ["arm64"] },
      "cli-android-x64": { os: ["android"], cpu: ["x64"] },
      "cli-darwin-arm64": { os: ["darwin"], cpu: ["arm64"] },
      "cli-darwin-x64": { os: ["darwin"], cpu: ["x64"] },
      "cli-linux-arm64-musl": { os: ["linux"], cpu: ["arm64"], libc: ["musl"] },
      "cli-linux-x64-musl": { os: ["linux"], cpu: ["x64"], libc: ["musl"] },
      "cli-win32-arm64": { os: ["win32"], cpu: ["arm64"] },
      "cli-win32-x64": { os: ["win32"], cpu: ["x64"] },
    },
  },
  {
    anchor: "node_modules/@duckdb/node-bindings",
    scope: "node_modules/@duckdb/",
    extra: { license: "MIT" },
    platforms: {
      "node-bindings-darwin-arm64": { os: ["darwin"], cpu: ["arm64"] },
      "node-bindings-darwin-x64": { os: ["darwin"], cpu: ["x64"] },
      "node-bindings-linux-arm64": { os: ["linux"], cpu: ["arm64"], libc: ["glibc"] },
      "node-bindings-linux-arm64-musl": { os: ["linux"], cpu: ["arm64"], libc: ["musl"] },
      "node-bindings-linux-x64-musl": { os: ["linux"], cpu: ["x64"], libc: ["musl"] },
      "node-bindings-win32-arm64": { os: ["win32"], cpu: ["arm64"] },
      "node-bindings-win32-x64": { os: ["win32"], cpu: ["x64"] },
    },
  },
];

for (const family of families) {
  const anchor = lock.packages[family.anchor];
  if (!anchor) continue;
  for (const [name, p] of Object.entries(family.platforms)) {
    const key = `${family.scope}${name}`;
    if (lock.packages[key]) continue;
    lock.packages[key] = { version: anchor.version, ...p, ...family.extra, optional: true };
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : 1)),
);
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
