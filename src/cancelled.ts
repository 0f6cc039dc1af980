/**
 * The call was cancelled (its MCP request aborted) while it waited: for the service, for a file,
 * or for another process's creation. Thrown by whatever was waiting; the error text says only
 * that the call was cancelled.
 */
export class ToolCancelledError extends Error {
  override name = "ToolCancelledError";
}
