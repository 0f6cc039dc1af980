import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { ClientRoots } from "../files/client-roots.js";

/** How long the client has to list its roots before a file check goes on without them. */
const ROOTS_TIMEOUT_MS = 10_000;

/**
 * `roots/list`'s result with each root left as sent: the SDK's own schema refuses the whole list
 * for one root that is not `file://`, where only that root should be left out (client-roots.ts).
 */
const rootsAnswer = z.object({ roots: z.array(z.unknown()) });

/**
 * Follows the connected client's MCP roots into `roots`: listed once the client is initialized,
 * again on every `notifications/roots/list_changed`, and only when the client declared the
 * `roots` capability. For stdio with CRM_READ_ROOTS=1 (server.ts): over HTTP the server's roots
 * are not the caller's to choose.
 */
export function followClientRoots(server: McpServer, roots: ClientRoots): void {
  const inner = server.server;
  roots.follow(async () => {
    if (inner.getClientCapabilities()?.roots === undefined) return undefined;
    const answer = await inner.request({ method: "roots/list" }, rootsAnswer, {
      timeout: ROOTS_TIMEOUT_MS,
    });
    return answer.roots;
  });
  const before = inner.oninitialized;
  inner.oninitialized = () => {
    before?.();
    void roots.refresh();
  };
  inner.setNotificationHandler("notifications/roots/list_changed", () => {
    void roots.refresh();
  });
}
