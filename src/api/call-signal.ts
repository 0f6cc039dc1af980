/**
 * One AbortSignal per attempt that fires on the caller's abort or at the overall deadline, and
 * remembers which of the two it was: the first becomes an AbortedError, the second a TimeoutError.
 */
export interface CallSignal {
  signal: AbortSignal;
  callerAborted(): boolean;
  deadlineExpired(): boolean;
  dispose(): void;
}

export function callSignal(
  callerSignal: AbortSignal | undefined,
  deadline: number | undefined,
): CallSignal {
  const controller = new AbortController();
  let byCaller = false;
  let byDeadline = false;
  const onAbort = () => {
    byCaller = true;
    controller.abort(new Error("aborted by the caller"));
  };
  if (callerSignal?.aborted) onAbort();
  else callerSignal?.addEventListener("abort", onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  if (deadline !== undefined && !controller.signal.aborted) {
    const fire = () => {
      byDeadline = true;
      controller.abort(new Error("deadline passed"));
    };
    const remaining = deadline - Date.now();
    if (remaining <= 0) fire();
    else timer = setTimeout(fire, remaining);
  }
  return {
    signal: controller.signal,
    callerAborted: () => byCaller,
    deadlineExpired: () => byDeadline,
    dispose: () => {
      if (timer !== undefined) clearTimeout(timer);
      callerSignal?.removeEventListener("abort", onAbort);
    },
  };
}
