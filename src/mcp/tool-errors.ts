/**
 * Errors the tools throw besides the API client's ApiError family, DateInputError and the export
 * flow's errors (exports/errors.ts). Their messages are written for the model: what happened and
 * what to change.
 */

/** An input the model must change before any request is sent. */
export class ToolInputError extends Error {
  override name = "ToolInputError";
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/**
 * A call's own time bound ran out before the service had answered all its requests: the message
 * says how far it got and what to do (retry, or ask for less).
 */
export class CallDeadlineError extends Error {
  override name = "CallDeadlineError";
}
