/**
 * The oldest Node the package runs on (package.json `engines`, held equal by a test) and the one
 * line an older Node is refused with. The bin loads this module alone and imports everything else
 * only once the check passes: on Node 20 the server would otherwise start, list its tools and
 * then fail inside them (undici 8 needs 22.19). It imports nothing and keeps to syntax that old
 * Node versions parse, so the refusal is what they show.
 */

const MIN_MAJOR = 22;
const MIN_MINOR = 19;

/** `major.minor`, as `engines` writes it after `>=`. */
export const MIN_NODE_VERSION = `${MIN_MAJOR}.${MIN_MINOR}`;

/** `version` as in `process.versions.node` (`20.18.1`, a leading `v` allowed). */
export function isSupportedNode(version: string): boolean {
  const parts = version.replace(/^v/, "").split(".");
  const major = Number(parts[0]);
  const minor = Number(parts[1]);
  return major > MIN_MAJOR || (major === MIN_MAJOR && minor >= MIN_MINOR);
}

/** The refusal on one line (without its newline), or undefined when `version` is supported. */
export function nodeVersionRefusal(version: string): string | undefined {
  if (isSupportedNode(version)) return undefined;
  return `crm-insights-mcp: this is Node ${version}; it needs Node ${MIN_NODE_VERSION} or later. Install Node 22 LTS or later from https://nodejs.org or your package manager, and start crm-insights-mcp with that node.`;
}
