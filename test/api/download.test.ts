import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, stat, utimes, writeFile } from "node:fs/promises";
import { type AddressInfo, createServer as createNetServer } from "node:net";
import { hostname } from "node:os";
import { basename, join, resolve, sep } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkDownloadUrl, exportFileName } from "../../src/api/download-checks.js";
import { DownloadFailedError, DownloadRefusedError } from "../../src/api/errors.js";
import type { ExportJob } from "../../src/api/schemas.js";
import { isLoopbackHost } from "../../src/loopback-host.js";
import { abortOnArrival, fixtureServerForFile } from "../helpers/fixture-server.js";
import { clientFor, listFiles, tempDir } from "./support.js";

// Each is reset after every test: requests, leftover replies and the default reply.
const server = fixtureServerForFile();
const other = fixtureServerForFile();
let dir: { path: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await dir.cleanup();
});

const CSV = "task_id,scheduled_at\nt1,2026-11-01 10:00:00\n";
const SIGNATURE = "X-Sig=topsecretsignature123";

function completedJob(overrides: Partial<ExportJob> = {}): ExportJob {
  return {
    _id: "job-1",
    application_id: "app",
    type: "campaign_event_data",
    status: "completed",
    campaign_id: "cmp",
    file_name: "campaign_cmp_20261101",
    file_ext: "csv",
    file_size: Buffer.byteLength(CSV),
    download_url: `${server.url}/files/export.csv?${SIGNATURE}`,
    download_url_expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    created_at: "2026-11-22T00:00:00Z",
    updated_at: "2026-11-22T00:00:00Z",
    ...overrides,
  };
}

async function refusal(promise: Promise<unknown>): Promise<DownloadRefusedError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(DownloadRefusedError);
  return error as DownloadRefusedError;
}

describe("a good download", () => {
  it("lands under <dataDir>/exports with mode 0600 and no Authorization header", async () => {
    const client = clientFor(server, dir.path);
    server.reply({ body: CSV, headers: { "content-type": "text/csv" } });
    const file = await client.downloadExport(completedJob());
    expect(file.path).toBe(join(dir.path, "exports", "job-1-campaign_cmp_20261101.csv"));
    expect(file.bytes).toBe(Buffer.byteLength(CSV));
    expect(await readFile(file.path, "utf8")).toBe(CSV);
    expect((await stat(file.path)).mode & 0o777).toBe(0o600);
    const [req] = server.requests;
    expect(req?.url).toBe(`/files/export.csv?${SIGNATURE}`);
    expect(req?.headers.authorization).toBeUndefined();
    expect(Object.keys(req?.headers ?? {})).not.toContain("authorization");
    expect(await listFiles(dir.path)).toEqual([join("exports", basename(file.path))]);
    await client.close();
  });

  it("follows an allowed redirect and checks each hop", async () => {
    const client = clientFor(server, dir.path, { downloadHosts: [] });
    server.reply(
      { status: 302, headers: { location: `/hop2?${SIGNATURE}` } },
      { status: 307, headers: { location: `${server.url}/final` } },
      { body: CSV },
    );
    const file = await client.downloadExport(completedJob());
    expect(await readFile(file.path, "utf8")).toBe(CSV);
    expect(server.requests.map((r) => r.path)).toEqual(["/files/export.csv", "/hop2", "/final"]);
    expect(server.requests.every((r) => r.headers.authorization === undefined)).toBe(true);
    await client.close();
  });

  it("gives up after 5 redirects and leaves nothing behind", async () => {
    const client = clientFor(server, dir.path);
    server.setDefault({ status: 302, headers: { location: "/again" } });
    const error = await client.downloadExport(completedJob()).catch((e: unknown) => e);
    server.setDefault({ status: 500, json: { error: "no scripted reply" } });
    expect(error).toBeInstanceOf(DownloadFailedError);
    expect(server.requests).toHaveLength(6);
    expect(await listFiles(dir.path)).toEqual([]);
    await client.close();
  });
});

describe("refused before connecting", () => {
  it("an expired URL", async () => {
    const client = clientFor(server, dir.path);
    const error = await refusal(
      client.downloadExport(
        completedJob({ download_url_expires_at: new Date(Date.now() - 1000).toISOString() }),
      ),
    );
    expect(error.reason).toBe("expired");
    expect(error.message).toMatch(/new export job/);
    expect(server.requests).toHaveLength(0);
    await client.close();
  });

  it("expiry follows the injectable clock", async () => {
    const job = completedJob({ download_url_expires_at: "2026-11-22T10:00:00Z" });
    const late = clientFor(server, dir.path, { now: () => Date.parse("2026-11-22T10:00:01Z") });
    expect((await refusal(late.downloadExport(job))).reason).toBe("expired");
    const early = clientFor(server, dir.path, { now: () => Date.parse("2026-11-22T09:59:00Z") });
    server.reply({ body: CSV });
    await expect(early.downloadExport(job)).resolves.toMatchObject({ bytes: CSV.length });
    await late.close();
    await early.close();
  });

  it("plain http to a host that is not loopback", async () => {
    const client = clientFor(server, dir.path);
    const error = await refusal(
      client.downloadExport(
        completedJob({ download_url: `http://files.example.com/x.csv?${SIGNATURE}` }),
      ),
    );
    expect(error.reason).toBe("insecure");
    expect(error.message).toContain("http://files.example.com/x.csv");
    expect(error.message).not.toContain("topsecret");
    await client.close();
  });

  it("a host that is not allowed", async () => {
    const client = clientFor(server, dir.path, { downloadHosts: ["files.example.com"] });
    const error = await refusal(
      client.downloadExport(
        completedJob({ download_url: `https://evil.example.net/x.csv?${SIGNATURE}` }),
      ),
    );
    expect(error.reason).toBe("host_not_allowed");
    expect(error.message).toContain("CRM_DOWNLOAD_HOSTS");
    expect(error.message).not.toContain("topsecret");
    await client.close();
  });

  it("a file announced larger than the cap", async () => {
    const client = clientFor(server, dir.path, { maxDownloadBytes: 1000 });
    const error = await refusal(client.downloadExport(completedJob({ file_size: 1001 })));
    expect(error.reason).toBe("too_large");
    expect(server.requests).toHaveLength(0);
    await client.close();
  });

  it("a job that is not completed, or an unexpected file type", async () => {
    const client = clientFor(server, dir.path);
    await refusal(client.downloadExport(completedJob({ status: "processing" })));
    await refusal(client.downloadExport(completedJob({ file_ext: "exe" })));
    await refusal(client.downloadExport(completedJob({ file_ext: "csv/../../x" })));
    expect(server.requests).toHaveLength(0);
    await client.close();
  });

  it("checkDownloadUrl: any https host when no list is configured, API hosts always", () => {
    const open = { apiHosts: ["api.example.com"], downloadHosts: undefined };
    expect(checkDownloadUrl("https://anything.example.org/f", open).hostname).toBe(
      "anything.example.org",
    );
    const listed = { apiHosts: ["api.example.com"], downloadHosts: ["files.example.com"] };
    expect(checkDownloadUrl("https://API.example.com/f", listed).hostname).toBe("api.example.com");
    expect(checkDownloadUrl("https://files.example.com/f", listed).hostname).toBe(
      "files.example.com",
    );
    expect(() => checkDownloadUrl("https://files.example.com.evil.net/f", listed)).toThrow(
      DownloadRefusedError,
    );
    expect(() => checkDownloadUrl("ftp://files.example.com/f", open)).toThrow(/https/);
    expect(() => checkDownloadUrl("https://user:pw@files.example.com/f", open)).toThrow(
      DownloadRefusedError,
    );
  });
});

describe("this machine is reachable only when the service itself runs on it", () => {
  it("a remote service's download URL aimed at loopback is refused before connecting", async () => {
    // The API host is never contacted here: only the download URL is.
    const client = clientFor({ ...server, url: "https://api.example.com" }, dir.path);
    for (const url of [
      `${server.url}/files/export.csv?${SIGNATURE}`,
      `http://localhost:${server.port}/x.csv`,
    ]) {
      const error = await refusal(client.downloadExport(completedJob({ download_url: url })));
      expect(error.reason).toBe("insecure");
      expect(error.message).toContain("may not point at this machine");
      expect(error.message).not.toContain("topsecret");
    }
    expect(server.requests).toHaveLength(0);
    await client.close();
  });

  it("checkDownloadUrl: loopback only for a local service, never as a redirect from elsewhere", () => {
    const remote = { apiHosts: ["api.example.com"], downloadHosts: undefined };
    const local = { ...remote, localService: true, serviceOrigins: ["http://127.0.0.1:8080"] };
    for (const target of [
      "http://127.0.0.1:6379/",
      "https://127.0.0.2/f",
      "https://localhost/f",
      "https://[::1]/f",
    ]) {
      expect(() => checkDownloadUrl(target, remote), target).toThrow(/this machine/);
      expect(
        () => checkDownloadUrl(target, local, new URL("https://files.example.com/a")),
        target,
      ).toThrow(/this machine/);
    }
    expect(checkDownloadUrl("http://127.0.0.1:8080/f", local).port).toBe("8080");
    // Plain http only to the service's exact origin: not another name, port or address for it.
    for (const target of [
      "http://localhost:8080/f",
      "http://127.0.0.1:8081/f",
      "http://127.0.0.2:8080/latest/meta-data/",
      "http://[::1]:8080/f",
    ]) {
      expect(() => checkDownloadUrl(target, local), target).toThrow(/service's own address/);
      expect(
        () => checkDownloadUrl(target, local, new URL("http://127.0.0.1:8080/a")),
        target,
      ).toThrow(/service's own address/);
    }
    expect(checkDownloadUrl("https://localhost:8443/f", local).host).toBe("localhost:8443");
    // `*.localhost` is not known to resolve to this machine: no plain http for it.
    expect(() => checkDownloadUrl("http://files.localhost/f", local)).toThrow(/only https/);
    expect(isLoopbackHost("files.localhost")).toBe(false);
    expect(isLoopbackHost("127.1.2.3")).toBe(true);
    expect(isLoopbackHost("[::1]")).toBe(true);
    expect(isLoopbackHost("10.0.0.1")).toBe(false);
  });
});

describe("plain http only to the service's own origin", () => {
  it("a download_url on another loopback address is refused; nothing connects to it", async () => {
    // A listener on 127.0.0.2 (loopback, not the service's address) that counts connections.
    let connections = 0;
    const trap = createNetServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => trap.listen(0, "127.0.0.2", resolve));
    const { port } = trap.address() as AddressInfo;
    try {
      const client = clientFor(server, dir.path);
      for (const url of [
        `http://127.0.0.2:${port}/latest/meta-data/iam/security-credentials/`,
        `http://localhost:${server.port}/files/export.csv`,
        `http://127.0.0.1:${port}/files/export.csv`,
      ]) {
        const error = await refusal(client.downloadExport(completedJob({ download_url: url })));
        expect(error.reason).toBe("insecure");
        expect(error.message).toContain(`only to the service's own address, ${server.url}`);
      }
      // A redirect from the service to that address is refused at the hop as well.
      server.reply({
        status: 302,
        headers: { location: `http://127.0.0.2:${port}/latest/meta-data/` },
      });
      expect((await refusal(client.downloadExport(completedJob()))).reason).toBe("insecure");
      expect(connections).toBe(0);
      expect(await listFiles(dir.path)).toEqual([]);
      await client.close();
    } finally {
      await new Promise((resolve) => trap.close(resolve));
    }
  });
});

describe("a redirect to a disallowed host", () => {
  it("is refused at that hop; the other host sees nothing and no file remains", async () => {
    // API and allowed host: 127.0.0.1; "localhost" is a different, unlisted host name.
    const client = clientFor(server, dir.path, { downloadHosts: [] });
    server.reply({
      status: 302,
      headers: { location: `http://localhost:${other.port}/steal?${SIGNATURE}` },
    });
    const error = await refusal(client.downloadExport(completedJob()));
    expect(error.reason).toBe("host_not_allowed");
    expect(error.message).not.toContain("topsecret");
    expect(server.requests).toHaveLength(1);
    expect(other.requests).toHaveLength(0);
    expect(await listFiles(dir.path)).toEqual([]);
    await client.close();
  });

  it("to plain http on a non-loopback host is refused too", async () => {
    const client = clientFor(server, dir.path);
    server.reply({ status: 301, headers: { location: "http://files.example.com/x.csv" } });
    expect((await refusal(client.downloadExport(completedJob()))).reason).toBe("insecure");
    await client.close();
  });
});

describe("size checks leave no partial file", () => {
  it("a body shorter than file_size", async () => {
    const client = clientFor(server, dir.path);
    server.reply({ body: CSV.slice(0, 10) });
    const error = await client.downloadExport(completedJob()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DownloadFailedError);
    expect((error as Error).message).toContain(`10 of the ${Buffer.byteLength(CSV)} bytes`);
    // A plain fact: the next step is the tool layer's to give.
    expect((error as Error).message).toMatch(/nothing was kept\.$/);
    expect(await listFiles(dir.path)).toEqual([]);
    await client.close();
  });

  it("a body longer than file_size", async () => {
    const client = clientFor(server, dir.path);
    server.reply({ body: `${CSV}${"x".repeat(100_000)}` });
    await expect(client.downloadExport(completedJob())).rejects.toBeInstanceOf(DownloadFailedError);
    expect(await listFiles(dir.path)).toEqual([]);
    await client.close();
  });

  it("a streamed body over the cap when the job gives no size", async () => {
    const client = clientFor(server, dir.path, { maxDownloadBytes: 50_000 });
    server.reply((_req, res) => {
      // Chunked, no content-length: only counting while streaming can catch it.
      res.writeHead(200);
      for (let i = 0; i < 20; i++) res.write("y".repeat(10_000));
      res.end();
    });
    const error = await client
      .downloadExport(completedJob({ file_size: undefined }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DownloadFailedError);
    expect((error as Error).message).toContain("50000-byte limit");
    expect(await listFiles(dir.path)).toEqual([]);
    await client.close();
  });

  it("an HTTP error from the file host keeps no body and no signature", async () => {
    const client = clientFor(server, dir.path);
    server.reply({
      status: 403,
      body: `<Error><SignatureProvided>${SIGNATURE}</SignatureProvided></Error>`,
    });
    const error = (await client
      .downloadExport(completedJob())
      .catch((e: unknown) => e)) as DownloadFailedError;
    expect(error).toBeInstanceOf(DownloadFailedError);
    expect(error.status).toBe(403);
    expect(`${error.message} ${error.detail} ${error.stack}`).not.toContain("topsecret");
    expect(await listFiles(dir.path)).toEqual([]);
    await client.close();
  });
});

describe("deadline and abort", () => {
  it("a stalled download stops at the deadline and leaves nothing", async () => {
    const client = clientFor(server, dir.path);
    server.reply((_req, res) => {
      res.writeHead(200);
      res.write(CSV.slice(0, 5));
    });
    const started = Date.now();
    const error = await client
      .downloadExport(completedJob(), { deadline: Date.now() + 300 })
      .catch((e: unknown) => e);
    expect((error as { kind?: string }).kind).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await listFiles(dir.path)).toEqual([]);
    await client.close();
  });

  it("the caller's abort stops a download", async () => {
    const client = clientFor(server, dir.path);
    const controller = new AbortController();
    server.reply(abortOnArrival(() => controller.abort()));
    const error = await client
      .downloadExport(completedJob(), { signal: controller.signal })
      .catch((e: unknown) => e);
    expect((error as { kind?: string }).kind).toBe("aborted");
    expect(await listFiles(dir.path)).toEqual([]);
    await client.close();
  });
});

describe("hostile file names stay inside the data directory", () => {
  const hostile = [
    "../../x",
    "/etc/passwd",
    "a\u0000b/../../c",
    "..\\..\\windows\\system32",
    ".bashrc",
    "..",
    "",
    "name\nwith\rcontrol\u0007",
    "한글 캠페인 리포트",
    "x".repeat(500),
  ];
  it.each(hostile)("%j", async (fileName) => {
    const client = clientFor(server, dir.path);
    server.reply({ body: CSV });
    const file = await client.downloadExport(
      completedJob({ _id: "../job/../../1", file_name: fileName }),
    );
    const exportsDir = resolve(dir.path, "exports");
    expect(file.path.startsWith(exportsDir + sep)).toBe(true);
    const name = basename(file.path);
    expect(resolve(exportsDir, name)).toBe(file.path);
    expect(name).toMatch(/^[A-Za-z0-9_-]+-[^/\\]+\.csv$/);
    expect([...name].every((c) => c.charCodeAt(0) >= 0x20)).toBe(true);
    expect(name.startsWith(".")).toBe(false);
    expect(name).not.toContain("..");
    // ID (64) + hash (9) + "-" + name (150 bytes) + ".csv": well inside the 255-byte limit.
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(64 + 9 + 1 + 150 + 4);
    expect(await listFiles(dir.path)).toEqual([join("exports", name)]);
    await client.close();
  });

  it("exportFileName keeps only the last path component and a known extension", () => {
    expect(exportFileName("job-1", "../../x", "csv")).toBe("job-1-x.csv");
    expect(exportFileName("job-1", "/etc/passwd", ".XLSX")).toBe("job-1-passwd.xlsx");
    expect(exportFileName("job-1", "한글 리포트", "csv")).toBe("job-1-한글 리포트.csv");
    expect(exportFileName("job-1", "..", "csv")).toBe("job-1-export.csv");
    expect(() => exportFileName("job-1", "x", "sh")).toThrow(DownloadRefusedError);
    expect(() => exportFileName("..", "x", "csv")).toThrow(DownloadRefusedError);
  });

  it("two job IDs that sanitize alike get different names; a clean ID stays as it is", () => {
    const slash = exportFileName("a/b", "x", "csv");
    const underscore = exportFileName("a_b", "x", "csv");
    expect(underscore).toBe("a_b-x.csv");
    expect(slash).not.toBe(underscore);
    expect(slash).toMatch(/^a_b_[0-9a-f]{8}-x\.csv$/);
    expect(exportFileName("a/b", "x", "csv")).toBe(slash);
    const long = "j".repeat(70);
    expect(exportFileName(long, "x", "csv")).not.toBe(exportFileName(`${long}k`, "x", "csv"));
  });
});

describe("long Korean file names", () => {
  const syllables = Array.from({ length: 100 }, (_, i) => String.fromCodePoint(0xac00 + i * 7));
  const hangul = syllables.join("");

  it("are cut by UTF-8 bytes at a character boundary and the download succeeds", async () => {
    expect(Buffer.byteLength(hangul)).toBe(300);
    const name = exportFileName("6f1c2a9be04d3c7a81f5e290", hangul, "csv");
    // 150 bytes of 3-byte syllables: the first 50, whole.
    expect(name).toBe(`6f1c2a9be04d3c7a81f5e290-${syllables.slice(0, 50).join("")}.csv`);
    expect(exportFileName("j", `${"a".repeat(149)}${hangul}`, "csv")).toBe(
      `j-${"a".repeat(149)}.csv`,
    );

    const client = clientFor(server, dir.path);
    server.reply({ body: CSV });
    const file = await client.downloadExport(
      completedJob({ _id: "6f1c2a9be04d3c7a81f5e290", file_name: `캠페인 ${hangul}` }),
    );
    expect(await readFile(file.path, "utf8")).toBe(CSV);
    expect(Buffer.byteLength(basename(file.path))).toBeLessThanOrEqual(255);
    expect(basename(file.path)).not.toContain("\uFFFD");
    await client.close();
  });
});

describe("local file-system failures are reported as such", () => {
  it("a data directory that cannot be created", async () => {
    // Running as root defeats read-only modes; a regular file in the path fails for everyone.
    await writeFile(join(dir.path, "not-a-dir"), "x");
    const client = clientFor(server, join(dir.path, "not-a-dir"));
    const error = (await client
      .downloadExport(completedJob())
      .catch((e: unknown) => e)) as DownloadFailedError;
    expect(error).toBeInstanceOf(DownloadFailedError);
    expect(error.message).toContain(`Could not write the export to ${join(dir.path, "not-a-dir")}`);
    expect(error.message).toContain("ENOTDIR");
    expect(error.message).toContain("CRM_DATA_DIR");
    expect(error.message).not.toMatch(/could not reach/i);
    expect(server.requests).toHaveLength(0);
    await client.close();
  });

  it("a final name that cannot be written (rename fails) leaves no partial file", async () => {
    const client = clientFor(server, dir.path);
    const blocked = join(dir.path, "exports", "job-1-campaign_cmp_20261101.csv");
    await mkdir(join(blocked, "inside"), { recursive: true });
    server.reply({ body: CSV });
    const error = (await client
      .downloadExport(completedJob())
      .catch((e: unknown) => e)) as DownloadFailedError;
    expect(error).toBeInstanceOf(DownloadFailedError);
    expect(error.message).toMatch(/Could not write the export to .*: (EISDIR|ENOTEMPTY|EEXIST)\./);
    expect(await readdir(join(dir.path, "exports"))).toEqual([basename(blocked)]);
    await client.close();
  });
});

describe("temporary files a killed process left behind", () => {
  it("are removed when their owner process is gone, whatever their mtime; others stay", async () => {
    const exportsDir = join(dir.path, "exports");
    await mkdir(exportsDir, { recursive: true });
    const gone = spawn(process.execPath, ["-e", ""]);
    const deadPid = gone.pid;
    await new Promise((r) => gone.once("exit", r));
    const tag = createHash("sha256").update(hostname()).digest("hex").slice(0, 8);
    const dead = `.${tag}-${deadPid}.0123456789abcdef.part`;
    const live = `.${tag}-${process.pid}.fedcba9876543210.part`;
    const otherHost = `.0badc0de-${deadPid}.0123456789abcdef.part`;
    const other = ".notours.part";
    for (const name of [dead, live, otherHost, other]) {
      await writeFile(join(exportsDir, name), "partial");
    }
    // A clock that jumped: the dead owner's file looks brand new, the live one's ancient.
    const ahead = new Date(Date.now() + 3_600_000);
    const behind = new Date(Date.now() - 48 * 3_600_000);
    await utimes(join(exportsDir, dead), ahead, ahead);
    await utimes(join(exportsDir, live), behind, behind);
    const client = clientFor(server, dir.path);
    server.reply({ body: CSV });
    const file = await client.downloadExport(completedJob());
    expect((await readdir(exportsDir)).sort()).toEqual(
      [live, otherHost, other, basename(file.path)].sort(),
    );
    await client.close();
  });
});
