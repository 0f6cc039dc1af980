import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { describe, expect, it, onTestFinished } from "vitest";

// `crm-insights-mcp sandbox` as the contract fixes it; runs the built dist (its vitest project builds it first).
const CLI = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));

function run(args: string[]): ChildProcess {
  const child = spawn(process.execPath, [CLI, "sandbox", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  // Also when the test fails: a sandbox left serving would keep its temp folder of files.
  onTestFinished(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    await exited;
  });
  return child;
}

async function firstLine(child: ChildProcess): Promise<string> {
  let buffer = "";
  for await (const chunk of child.stdout ?? []) {
    buffer += String(chunk);
    const end = buffer.indexOf("\n");
    if (end >= 0) return buffer.slice(0, end);
  }
  throw new Error("no stdout line");
}

describe("crm-insights-mcp sandbox", () => {
  it("prints the SandboxInfo JSON first, serves, and exits 0 on SIGTERM", async () => {
    const child = run([
      "--port",
      "0",
      "--seed",
      "7",
      "--now",
      "2024-06-15T12:00:00+09:00",
      "--job-seconds",
      "0",
    ]);
    const info = JSON.parse(await firstLine(child)) as Record<string, unknown>;
    expect(Object.keys(info).sort()).toEqual(
      [
        "application_id",
        "base_url",
        "campaign_ids",
        "realtime_base_url",
        "recommend_secret_key",
        "scenario_ids",
        "secret_key",
        "slot_keys",
        "other_slots",
      ].sort(),
    );
    expect(String(info.base_url)).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((info.campaign_ids as string[]).length).toBeGreaterThan(0);
    const res = await fetch(
      `${info.base_url}/prod/v2/applications/${info.application_id}/campaigns/metrics?task_from=2024-06-01&task_to=2024-06-14`,
      { headers: { Authorization: String(info.secret_key) } },
    );
    expect(res.status).toBe(200);
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    const [code] = await exited;
    expect(code).toBe(0);
  });

  it.each([
    [["--port", "abc"], "--port"],
    [["--now", "tomorrow"], "--now"],
    [["--job-seconds", "-1"], "--job-seconds"],
    [["--seed"], "--seed"],
    [["--colour", "red"], "--colour"],
  ])("refuses %j with a clear message and exit code 2", async (args, mention) => {
    const child = run(args);
    let stderr = "";
    child.stderr?.on("data", (chunk) => {
      stderr += String(chunk);
    });
    const [code] = await once(child, "exit");
    expect(code).toBe(2);
    expect(stderr).toContain(mention);
  });
});

describe("runSandboxCommand on a busy port", () => {
  it("says the port is in use and suggests --port 0, exit code 1", async () => {
    const { createServer } = await import("node:net");
    const { runSandboxCommand } = await import("../../src/sandbox/cli.js");
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    const port = (busy.address() as { port: number }).port;
    const written: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      expect(await runSandboxCommand(["--port", String(port)])).toBe(1);
    } finally {
      process.stderr.write = original;
      busy.close();
    }
    const text = written.join("");
    expect(text).toContain(`port ${port} is already in use`);
    expect(text).toContain("--port 0");
    expect(text).not.toContain("EADDRINUSE");
  });
});
