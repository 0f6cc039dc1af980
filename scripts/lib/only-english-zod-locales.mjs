// An esbuild plugin for every bundle we build (the report page, the bin): zod re-exports all
// its locales from one module (~50 files), and only English error text is ever used.
import { dirname, join } from "node:path";

export const onlyEnglishZodLocales = {
  name: "only-english-zod-locales",
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${"node_modules"}/zod/`)
        ? { path: join(dirname(args.importer), args.path), namespace: "zod-locales" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "zod-locales" }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(join(dirname(args.path), "en.js"))};`,
      resolveDir: dirname(args.path),
    }));
  },
};
