// `npm run bench`: runs every bench/*.mjs in name order, each in its own node process, passing
// its output through; exits non-zero if any of them failed.
import { spawn } from "node:child_process";
import { readdir } from "node:fs/promises";

const dir = new URL("../bench/", import.meta.url);
const files = (await readdir(dir)).filter((f) => f.endsWith(".mjs")).sort();
const failed = [];
for (const file of files) {
  process.stdout.write(`\n=== bench/${file} ===\n`);
  const code = await new Promise((resolve) => {
    const child = spawn(process.execPath, [new URL(file, dir).pathname], { stdio: "inherit" });
    child.once("exit", (status, signal) => resolve(status ?? (signal === null ? 1 : 1)));
    child.once("error", () => resolve(1));
  });
  if (code !== 0) failed.push(`${file} (exit ${code})`);
}
process.stdout.write(
  failed.length === 0
    ? `\nAll ${files.length} benchmarks passed.\n`
    : `\n${failed.length} of ${files.length} benchmarks failed: ${failed.join(", ")}\n`,
);
process.exitCode = failed.length === 0 ? 0 : 1;
