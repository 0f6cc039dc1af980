/** CRM_DATABASE_URL's parts that may be shown, and the one that must not. */

/** The database named for messages and logs, without user name or password. */
export function describeDatabase(url: string): string {
  try {
    const parsed = new URL(url);
    const host = parsed.hostname || parsed.searchParams.get("host") || "local socket";
    const port = parsed.port ? `:${parsed.port}` : "";
    return `PostgreSQL database ${decodeURIComponent(parsed.pathname.replace(/^\//, "")) || "(default)"} on ${host}${port}`;
  } catch {
    return "PostgreSQL database (CRM_DATABASE_URL)";
  }
}

/** The password in a database URL, to register for redaction; undefined when there is none. */
export function databasePassword(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    const password = decodeURIComponent(new URL(url).password);
    return password === "" ? undefined : password;
  } catch {
    return undefined;
  }
}
