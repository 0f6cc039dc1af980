/**
 * A `node --import` argument that registers a module load hook appending each loaded module's
 * URL to the file `out`, one per line: which modules a child process (and its worker threads,
 * which inherit the flag) really loaded.
 */
export function recordLoadsTo(out: string): string {
  const hooks = `import { appendFileSync } from "node:fs";
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(out)}, url + "\\n");
  return next(url, context);
}`;
  const register = `import { register } from "node:module";
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
  return `data:text/javascript,${encodeURIComponent(register)}`;
}
