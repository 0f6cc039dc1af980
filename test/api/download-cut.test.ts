import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDir } from "./support.js";

/**
 * A download the file host cuts short must cost the download, not the process: undici 7 threw an
 * uncatchable assertion from the socket's `end` handler when the body was paused
 * (nodejs/undici#5360, fixed in undici 8), so the client runs in a child process and the test
 * watches it survive. The child runs the built code (its project builds dist/ first).
 */
const builtClient = new URL("../../dist/api/client.js", import.meta.url);

let dir: { path: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await dir.cleanup();
});

/** The child: a raw loopback file host that sends `sent` of `size` bytes and closes. */
const CHILD = `
import { createServer } from "node:net";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
const [clientUrl, dataDir, plan] = process.argv.slice(1);
const { createApiClient } = await import(clientUrl);
let current;
const server = createServer((sock) => {
  sock.once("data", () => {
    const { size, sent } = current;
    sock.write("HTTP/1.1 200 OK\\r\\nContent-Length: " + size + "\\r\\nContent-Type: text/csv\\r\\nConnection: close\\r\\n\\r\\n");
    sock.end(Buffer.alloc(sent, 0x61));
  });
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const url = "http://127.0.0.1:" + server.address().port;
const client = createApiClient({ baseUrl: url, realtimeBaseUrl: url, applicationId: "a",
  secretKey: "export-secret-key-0001", recommendSecretKey: "recommend-secret-key-0002", dataDir });
const results = [];
for (const [i, step] of JSON.parse(plan).entries()) {
  current = step;
  const job = { _id: "job" + i, application_id: "a", type: "campaign_event_data", status: "completed",
    campaign_id: "c", file_name: "f", file_ext: "csv", file_size: step.size,
    download_url: url + "/f.csv?sig=1", download_url_expires_at: new Date(Date.now() + 3600e3).toISOString(),
    created_at: "2026-11-22T00:00:00Z", updated_at: "2026-11-22T00:00:00Z" };
  const outcome = await client.downloadExport(job).then((f) => ({ bytes: f.bytes }), (e) => ({ error: e.name + ": " + e.message }));
  results.push(outcome);
}
const left = (await readdir(join(dataDir, "exports"))).filter((n) => n.endsWith(".part"));
process.stdout.write(JSON.stringify({ results, left }));
await client.close();
server.close();
`;

function runChild(plan: Array<{ size: number; sent: number }>): Promise<{
  code: number | null;
  stdout: string;
  stderr: string;
}> {
  const child = spawn(
    process.execPath,
    ["--input-type=module", "-e", CHILD, builtClient.href, dir.path, JSON.stringify(plan)],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}

describe("a download cut short by the file host", () => {
  it("is reported as cut, leaves no .part file, and the process lives on", async () => {
    if (!existsSync(builtClient)) throw new Error("dist/api/client.js missing: run npm run build");
    // Half of each body, then FIN: sizes around undici's 64 KiB body buffer, where the parser
    // pauses exactly as the socket ends (main crashed on 229,000 bytes every time here).
    const cut = [131_072, 200_000, 229_000, 300_000].flatMap((size) =>
      Array.from({ length: 3 }, () => ({ size, sent: size / 2 })),
    );
    // Whole bodies closed with Connection: close still arrive complete.
    const whole = [{ size: 229_000, sent: 229_000 }];
    const run = await runChild([...cut, ...whole]);
    expect(run.stderr).not.toContain("AssertionError");
    expect(run.code).toBe(0);
    const { results, left } = JSON.parse(run.stdout) as {
      results: Array<{ error?: string; bytes?: number }>;
      left: string[];
    };
    expect(results).toHaveLength(cut.length + 1);
    cut.forEach((step, i) => {
      expect(results[i]?.error).toBe(
        `DownloadFailedError: The download from ${results[i]?.error?.match(/http:\/\/127\.0\.0\.1:\d+\/f\.csv/)?.[0]} broke off after ${step.sent} of the ${step.size} bytes (the connection closed early); nothing was kept.`,
      );
    });
    expect(results.at(-1)).toEqual({ bytes: 229_000 });
    expect(left).toEqual([]);
  });
});
