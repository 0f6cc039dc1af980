// Assembles the project's WebAssembly text files (src/**/*.wat) into the TypeScript modules that
// hold their binaries (NAME-wasm.ts beside each). Run after editing a .wat file; the output is
// committed, so neither the build nor the tests need the assembler. A .wat file's memory layout
// (offsets, sizes) is written in NAME-layout.ts beside it, which the TypeScript side imports too:
// its constants fill the .wat's {{NAME}} places here (Node 22.18 or later: type stripping).
import { readdirSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { assembleWat, wasmModuleSource } from "./lib/wasm-module-source.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const sources = readdirSync(join(root, "src"), { recursive: true, encoding: "utf8" })
  .filter((path) => path.endsWith(".wat"))
  .map((path) => join(root, "src", path));
if (sources.length === 0) throw new Error("No .wat file found under src/.");
for (const source of sources) {
  const binary = await assembleWat(source);
  const target = source.replace(/\.wat$/, "-wasm.ts");
  writeFileSync(target, wasmModuleSource(basename(source), binary));
  console.log(`${target.slice(root.length + 1)}: ${binary.length} bytes`);
}
