// The registry mirror here carries only the linux glibc builds of Biome's platform packages;
// npm then leaves the others out of the lockfile and `npm ci` refuses it. Add them as optional,
// platform-limited entries (never fetched on linux-glibc).
import { readFileSync, writeFileSync } from "node:fs";

const path = process.argv[2];
const lock = JSON.parse(readFileSync(path, "utf8"));
const version = lock.packages["node_modules/@biomejs/biome"].version;
const platforms = {
  "cli-android-arm64": { os: ["android"], cpu: ["arm64"] },
  "cli-android-x64": { os: ["android"], cpu: ["x64"] },
  "cli-darwin-arm64": { os: ["darwin"], cpu: ["arm64"] },
  "cli-darwin-x64": { os: ["darwin"], cpu: ["x64"] },
  "cli-linux-arm64-musl": { os: ["linux"], cpu: ["arm64"], libc: ["musl"] },
  "cli-linux-x64-musl": { os: ["linux"], cpu: ["x64"], libc: ["musl"] },
  "cli-win32-arm64": { os: ["win32"], cpu: ["arm64"] },
  "cli-win32-x64": { os: ["win32"], cpu: ["x64"] },
};
for (const [name, p] of Object.entries(platforms)) {
  const key = `node_modules/@biomejs/${name}`;
  if (lock.packages[key]) continue;
  lock.packages[key] = {
    version,
    ...p,
    dev: true,
    license: "MIT OR Apache-2.0",
    optional: true,
    engines: { node: ">=14.21.3" },
  };
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : 1)),
);
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
