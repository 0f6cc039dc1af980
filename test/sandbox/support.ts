import { afterAll, onTestFinished } from "vitest";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox, SandboxOptions } from "../../src/sandbox/types.js";
import { waitUntil } from "../helpers/wait-until.js";

/** Pinned "today" for reproducible data: 2024-06-15 12:00 KST. */
export const TEST_NOW = "2024-06-15T03:00:00Z";

/** A real-time source the test moves by hand (download URL expiry, cache warm-up, pacing). */
export function manualClock(start = 1_000_000) {
  let t = start;
  return {
    read: (): number => t,
    advance(ms: number): void {
      t += ms;
    },
  };
}

/** Starts a sandbox over the real world, closed after the file's tests (call it at file level). */
export async function sandboxForFile(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const sandbox = await startSandbox({ now: TEST_NOW, jobSeconds: 0, ...options });
  afterAll(() => sandbox.close());
  return sandbox;
}

/**
 * Starts a sandbox for one test, closed when the test ends, also when it fails (inside a test,
 * afterAll is never called: the sandbox and its temp folder would stay).
 */
export async function sandboxForTest(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const sandbox = await startSandbox({ now: TEST_NOW, jobSeconds: 0, ...options });
  onTestFinished(() => sandbox.close());
  return sandbox;
}

export interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function answer(response: Response): Promise<Answer> {
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>),
  };
}

/** Thin HTTP helpers over fetch; `key` overrides the right key for the operation. */
export function client(sandbox: RunningSandbox, clock?: { advance(ms: number): void }) {
  const app = `${sandbox.base_url}/prod/v2/applications/${sandbox.application_id}`;
  const auth = (key: string | null): Record<string, string> =>
    key === null ? {} : { Authorization: key };
  return {
    async recommend(
      slot: string,
      body: unknown,
      key: string | null = sandbox.recommend_secret_key,
    ) {
      const url = `${sandbox.realtime_base_url}/v1/applications/${sandbox.application_id}/slots/${encodeURIComponent(slot)}/recommend`;
      return answer(
        await fetch(url, {
          method: "POST",
          headers: { "Content-Type": "application/json", ...auth(key) },
          body: typeof body === "string" ? body : JSON.stringify(body),
        }),
      );
    },
    async createJob(body: unknown, key: string | null = sandbox.secret_key) {
      return answer(
        await fetch(`${app}/export-jobs`, {
          method: "POST",
          headers: { "Content-Type": "application/json", ...auth(key) },
          body: typeof body === "string" ? body : JSON.stringify(body),
        }),
      );
    },
    async getJob(id: string, key: string | null = sandbox.secret_key) {
      return answer(
        await fetch(`${app}/export-jobs/${encodeURIComponent(id)}`, { headers: auth(key) }),
      );
    },
    async metrics(query: Record<string, string>, key: string | null = sandbox.secret_key) {
      const qs = new URLSearchParams(query).toString();
      return answer(await fetch(`${app}/campaigns/metrics?${qs}`, { headers: auth(key) }));
    },
    /** Creates a job and reads it until it is completed or failed (jobSeconds 0: one read). */
    async exportFile(body: unknown): Promise<Record<string, unknown>> {
      const created = await this.createJob(body);
      if (created.status !== 200)
        throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
      // Keep under the 10-per-10-minutes creation limit when the test owns the clock.
      clock?.advance(61_000);
      const id = String(created.body._id);
      let job = await this.getJob(id);
      const finished = () => job.body.status === "completed" || job.body.status === "failed";
      await waitUntil(
        async () => {
          if (!finished()) job = await this.getJob(id);
          return finished();
        },
        `export job ${id} to finish`,
        { intervalMs: 50 },
      );
      return job.body;
    },
  };
}
