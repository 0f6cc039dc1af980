import { execFileSync } from "node:child_process";
import { accessSync, constants, existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

/**
 * Programs some tests drive that `npm ci` does not bring: Debian's chromium (the report view,
 * browser clients), PostgreSQL (team mode's shared ledger and audit trail) and a font with
 * Hangul (the Korean report's glyphs). On a machine without one, the tests that need it are
 * skipped, and the run ends with one line per skipped file naming what is missing and the Debian
 * package that brings it (test/setup/missing-programs.ts). CI sets CRM_REQUIRE_ALL_TESTS=1: there
 * such a file fails instead, so a run never passes with them left out.
 *
 *   describe("team mode in PostgreSQL", needs("postgresql"), () => { ... });
 */

export type Need = "chromium" | "postgresql" | "hangul-font";

export const REQUIRE_ALL_TESTS = "CRM_REQUIRE_ALL_TESTS";

declare module "vitest" {
  interface TaskMeta {
    /** Why the suite or test was skipped: what is missing, and how to install it. */
    missing?: string;
  }
}

/** Debian's chromium, or the browser CRM_TEST_CHROMIUM names. */
export function chromiumPath(): string {
  return process.env.CRM_TEST_CHROMIUM || "/usr/bin/chromium";
}

const DEBIAN_POSTGRESQL = "/usr/lib/postgresql";

/**
 * The folder of initdb and pg_ctl: CRM_TEST_PG_BIN, else the newest of Debian's
 * /usr/lib/postgresql/VERSION/bin; undefined when there is none.
 */
export function postgresBinDir(): string | undefined {
  const chosen = process.env.CRM_TEST_PG_BIN;
  if (chosen) return chosen;
  if (!existsSync(DEBIAN_POSTGRESQL)) return undefined;
  const newest = readdirSync(DEBIAN_POSTGRESQL)
    .filter((v) => existsSync(join(DEBIAN_POSTGRESQL, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a))[0];
  return newest === undefined ? undefined : join(DEBIAN_POSTGRESQL, newest, "bin");
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

const CHECKS: Record<Need, () => string | undefined> = {
  chromium() {
    const path = chromiumPath();
    if (executable(path)) return undefined;
    return `no Chromium at ${path} (apt-get install chromium, or CRM_TEST_CHROMIUM=/path/to/chromium)`;
  },
  postgresql() {
    const bin = postgresBinDir();
    if (bin !== undefined && ["initdb", "pg_ctl"].every((p) => executable(join(bin, p)))) {
      return undefined;
    }
    const where = bin ?? `${DEBIAN_POSTGRESQL}/*/bin`;
    return `no PostgreSQL (initdb, pg_ctl) in ${where} (apt-get install postgresql, or CRM_TEST_PG_BIN=/path/to/bin)`;
  },
  "hangul-font"() {
    // Chromium finds its fonts through fontconfig; fc-list asks it the same question.
    let families: string;
    try {
      families = execFileSync("fc-list", [":lang=ko", "family"], { encoding: "utf8" });
    } catch {
      return "no fc-list to find a font with Hangul (apt-get install fontconfig fonts-nanum)";
    }
    return families.trim() === "" ? "no font with Hangul (apt-get install fonts-nanum)" : undefined;
  },
};

const found = new Map<Need, string | undefined>();

/** What is missing of `what`, as one sentence; undefined when everything is there. */
export function missing(...what: Need[]): string | undefined {
  const reasons = what.map((need) => {
    if (!found.has(need)) found.set(need, CHECKS[need]());
    return found.get(need);
  });
  const known = reasons.filter((r): r is string => r !== undefined);
  return known.length === 0 ? undefined : known.join("; ");
}

/**
 * Options for the describe() or it() of tests that need `what`: they run when everything is
 * there; else they are skipped with the reason, or, under CRM_REQUIRE_ALL_TESTS=1, the file
 * fails with it.
 */
export function needs(...what: Need[]): { skip: boolean; meta: { missing?: string } } {
  const reason = missing(...what);
  if (reason === undefined) return { skip: false, meta: {} };
  if (process.env[REQUIRE_ALL_TESTS] === "1") {
    throw new Error(`${reason}. ${REQUIRE_ALL_TESTS}=1 runs every test, skipping none.`);
  }
  return { skip: true, meta: { missing: reason } };
}
