import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.js";
import type { RunningSandbox, SandboxOptions } from "../../src/sandbox/types.js";
import { waitUntil } from "../helpers/wait-until.js";
import { client, TEST_NOW } from "./support.js";

// A sandbox given a data folder keeps its export jobs and files there, as a service would:
// a restarted sandbox, or a second one on the same folder, answers for them.

let dataDir: string;
const running: RunningSandbox[] = [];
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "sandbox-jobs-"));
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
  await rm(dataDir, { recursive: true, force: true });
});

async function start(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const sandbox = await startSandbox({ now: TEST_NOW, jobSeconds: 0, dataDir, ...options });
  running.push(sandbox);
  return sandbox;
}

async function download(url: string): Promise<{ status: number; bytes: Buffer }> {
  const response = await fetch(url);
  return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
}

function scenarioRequest(sandbox: RunningSandbox) {
  return {
    type: "scenario_daily_metrics",
    scenario_id: sandbox.scenario_ids[0],
    from: "2024-06-01",
    to: "2024-06-07",
  };
}

/** The PID of a process that has exited (so no process has it, for a while at least). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((resolve) => child.once("exit", resolve));
  if (child.pid === undefined) throw new Error("no pid");
  return child.pid;
}

describe("a sandbox with a data folder", () => {
  it("answers after a restart for a job made before it, with the same expiry on its own URL", async () => {
    const first = await start();
    const done = await client(first).exportFile(scenarioRequest(first));
    expect(done.status).toBe("completed");
    const before = await download(String(done.download_url));
    expect(before.status).toBe(200);
    await first.close();

    const second = await start();
    const again = await client(second).getJob(String(done._id));
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      _id: done._id,
      status: "completed",
      file_size: done.file_size,
      file_name: done.file_name,
      created_at: done.created_at,
      // Reading a job never extends its URL (spec 4.2), in this process or the next.
      download_url_expires_at: done.download_url_expires_at,
    });
    const url = String(again.body.download_url);
    expect(url.startsWith(`${second.base_url}/downloads/`)).toBe(true);
    const after = await download(url);
    expect(after.status).toBe(200);
    expect(after.bytes.equals(before.bytes)).toBe(true);
  });

  it("shares jobs between two sandboxes on one folder, each serving them on its own port", async () => {
    const [one, two] = await Promise.all([start(), start()]);
    if (one === undefined || two === undefined) throw new Error("not started");
    const created = await client(one).createJob(scenarioRequest(one));
    expect(created.status).toBe(200);
    const id = String(created.body._id);
    // Both read the completed job at once: one expiry is fixed, and both report it.
    const [a, b] = await Promise.all([client(one).getJob(id), client(two).getJob(id)]);
    expect(a.body.status).toBe("completed");
    expect(b.body.status).toBe("completed");
    expect(a.body.download_url_expires_at).toBe(b.body.download_url_expires_at);
    expect(String(b.body.download_url).startsWith(two.base_url)).toBe(true);
    const [fromOne, fromTwo] = await Promise.all([
      download(String(a.body.download_url)),
      download(String(b.body.download_url)),
    ]);
    expect(fromOne.status).toBe(200);
    expect(fromTwo.bytes.equals(fromOne.bytes)).toBe(true);
    // A URL is signed by the sandbox that issued it: the other's port refuses it.
    const crossed = String(a.body.download_url).replace(one.base_url, two.base_url);
    expect((await download(crossed)).status).toBe(403);
    // One record per job, no temporary file left, nothing torn.
    const records = await readdir(join(dataDir, "jobs", one.application_id));
    expect(records).toEqual([`${id}.json`]);
    const record = JSON.parse(
      await readFile(join(dataDir, "jobs", one.application_id, `${id}.json`), "utf8"),
    ) as Record<string, unknown>;
    expect(record).not.toHaveProperty("producer");
    expect(await readdir(join(dataDir, "files"))).toEqual([`${id}.xlsx`]);
  });

  /** A completed job made to look as a producer that stopped mid-file leaves it. */
  async function unfinishedJob(producerPid: number) {
    const first = await start();
    const done = await client(first).exportFile(scenarioRequest(first));
    const original = await download(String(done.download_url));
    await first.close();
    const id = String(done._id);
    const path = join(dataDir, "jobs", first.application_id, `${id}.json`);
    const record = JSON.parse(await readFile(path, "utf8")) as Record<string, unknown>;
    delete record.meta;
    delete record.completedAt;
    delete record.urlExpiresAtMs;
    record.producer = { pid: producerPid, host: hostname(), token: "t" };
    await writeFile(path, JSON.stringify(record));
    await rm(join(dataDir, "files", `${id}.xlsx`));
    return { id, original };
  }

  /** Reads the job until it is no longer processing (its callers expect it completed then). */
  async function readUntilDone(api: ReturnType<typeof client>, id: string) {
    let job = await api.getJob(id);
    await waitUntil(
      async () => {
        if (job.body.status === "processing") job = await api.getJob(id);
        return job.body.status !== "processing";
      },
      `job ${id} to be written again`,
      { intervalMs: 50 },
    );
    return job;
  }

  it("writes the file again when the process writing it died, and serves the same bytes", async () => {
    const { id, original } = await unfinishedJob(await deadPid());
    const second = await start();
    const job = await readUntilDone(client(second), id);
    expect(job.body.status).toBe("completed");
    const rewritten = await download(String(job.body.download_url));
    expect(rewritten.status).toBe(200);
    expect(rewritten.bytes.length).toBe(original.bytes.length);
  });

  it("leaves a job to its producer while that process runs, and takes it over once it is gone", async () => {
    // A live process that is not a sandbox: it runs until killed (or until this one ends).
    const producer = spawn(process.execPath, ["-e", "process.stdin.resume()"], {
      stdio: ["pipe", "ignore", "ignore"],
    });
    try {
      if (producer.pid === undefined) throw new Error("no pid");
      const { id } = await unfinishedJob(producer.pid);
      const second = await start();
      const api = client(second);
      expect((await api.getJob(id)).body.status).toBe("processing");
      expect(await readdir(join(dataDir, "files"))).toEqual([]);
      const exited = new Promise((resolve) => producer.once("exit", resolve));
      producer.kill("SIGKILL");
      await exited;
      expect((await readUntilDone(api, id)).body.status).toBe("completed");
    } finally {
      producer.kill("SIGKILL");
    }
  });
});

describe("a sandbox without a data folder", () => {
  it("forgets its jobs when it stops, as before", async () => {
    const first = await startSandbox({ now: TEST_NOW, jobSeconds: 0 });
    running.push(first);
    const done = await client(first).exportFile(scenarioRequest(first));
    await first.close();
    const second = await startSandbox({ now: TEST_NOW, jobSeconds: 0 });
    running.push(second);
    const again = await client(second).getJob(String(done._id));
    expect(again.status).toBe(400);
    expect(again.body.code).toBe("ResourceNotFound");
    expect(await readdir(dataDir)).toEqual([]);
  });
});
