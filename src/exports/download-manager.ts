import type { DownloadedFile } from "../api/types.js";
import { log } from "../log.js";

/**
 * Downloads of export files that run in the background, one per job: a large file over a slow
 * link outlasts an MCP client's deadline per call, so the download must not belong to the call
 * that started it. Calls share the running download, wait for it within their own budget, and
 * find a failure here when the download broke while nobody was waiting.
 */

export interface DownloadTask {
  readonly jobId: string;
  readonly startedAt: number;
  /** Bytes written so far. */
  bytes: number;
  /** The size the job announced, when it did. */
  readonly totalBytes: number | undefined;
  state: "running" | "done" | "failed";
  /** Settles with the file or the failure; never rejects unhandled. */
  readonly done: Promise<DownloadedFile>;
}

export type DownloadRun = (
  signal: AbortSignal,
  onProgress: (bytes: number) => void,
) => Promise<DownloadedFile>;

export class DownloadManager {
  private readonly tasks = new Map<string, DownloadTask>();
  private readonly failures = new Map<string, unknown>();
  private readonly controller = new AbortController();

  /** The running (or just finished, not yet collected) download of a job. */
  get(jobId: string): DownloadTask | undefined {
    return this.tasks.get(jobId);
  }

  /** The failure of the job's last background download, if nobody has taken it yet. */
  takeFailure(jobId: string): unknown {
    const failure = this.failures.get(jobId);
    this.failures.delete(jobId);
    return failure;
  }

  /**
   * The job's download: the running one if there is one, else a new one started with `run`.
   * `run` gets the manager's signal (aborted only by `close`), never a tool call's.
   */
  start(jobId: string, totalBytes: number | undefined, run: DownloadRun): DownloadTask {
    const running = this.tasks.get(jobId);
    if (running !== undefined && running.state === "running") return running;
    if (this.controller.signal.aborted) throw new Error("The server is closing.");
    this.failures.delete(jobId);
    const task: { -readonly [K in keyof DownloadTask]: DownloadTask[K] } = {
      jobId,
      startedAt: Date.now(),
      bytes: 0,
      totalBytes,
      state: "running",
      done: Promise.resolve({ path: "", bytes: 0 }),
    };
    task.done = run(this.controller.signal, (bytes) => {
      task.bytes = bytes;
    });
    this.tasks.set(jobId, task);
    task.done.then(
      () => {
        task.state = "done";
        if (this.tasks.get(jobId) === task) this.tasks.delete(jobId);
      },
      (error: unknown) => {
        task.state = "failed";
        if (this.tasks.get(jobId) === task) this.tasks.delete(jobId);
        // Closing the server aborted it: nobody is left to tell.
        if (this.controller.signal.aborted) return;
        // Kept for the next call: a download that broke after its caller returned must be told.
        this.failures.set(jobId, error);
        log.info("background download failed", {
          job_id: jobId,
          error: error instanceof Error ? error.name : "unknown",
        });
      },
    );
    return task;
  }

  /** Aborts every running download and waits until each has removed its partial file. */
  async close(): Promise<void> {
    this.controller.abort();
    await Promise.allSettled([...this.tasks.values()].map((t) => t.done));
    this.tasks.clear();
    this.failures.clear();
  }
}
