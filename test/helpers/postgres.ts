import { execFile } from "node:child_process";
import { chmod, chown, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { missing, postgresBinDir } from "./needs.js";

const run = promisify(execFile);

/**
 * A throwaway PostgreSQL cluster for tests: initdb into a temporary folder, started on a free
 * loopback port (and a socket in that folder), removed afterwards. PostgreSQL refuses to run as
 * root, so as root it runs as the `postgres` user (Debian's package creates it). Tests that use
 * it declare so with needs("postgresql") (./needs.ts), which skips them where it is missing.
 */
export interface TestPostgres {
  url: string;
  /** Stops the server as an operator would (`pg_ctl stop -m fast`), keeping the cluster. */
  halt(): Promise<void>;
  /** Starts the halted server again on the same port; resolves once it accepts connections. */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

export async function startTestPostgres(): Promise<TestPostgres> {
  const bin = postgresBinDir();
  const absent = missing("postgresql");
  if (bin === undefined || absent !== undefined) {
    throw new Error(`${absent}: the describe() around this test should have needs("postgresql")`);
  }
  const dir = await mkdtemp(join(tmpdir(), "crm-pg-"));
  try {
    return await startCluster(bin, dir);
  } catch (error) {
    // A cluster that did not start must not leave its folder (initdb may have filled it).
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

async function startCluster(bin: string, dir: string): Promise<TestPostgres> {
  const data = join(dir, "data");
  const asRoot = process.getuid?.() === 0;
  let uid: number | undefined;
  let gid: number | undefined;
  if (asRoot) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: g } = await run("id", ["-g", "postgres"]);
    uid = Number(stdout.trim());
    gid = Number(g.trim());
    await chown(dir, uid, gid);
  }
  await chmod(dir, 0o700);
  const as = (cmd: string, args: string[]) =>
    asRoot
      ? run("runuser", ["-u", "postgres", "--", join(bin, cmd), ...args], { cwd: dir })
      : run(join(bin, cmd), args, { cwd: dir });
  const port = await freePort();
  await as("initdb", ["-D", data, "-U", "crm", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  const start = () =>
    as("pg_ctl", [
      "-D",
      data,
      "-w",
      "-t",
      "60",
      "-l",
      join(dir, "server.log"),
      "-o",
      `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c max_connections=200`,
      "start",
    ]);
  await start();
  let stopped = false;
  return {
    url: `postgres://crm@127.0.0.1:${port}/postgres`,
    async halt() {
      await as("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "60", "stop"]);
    },
    async resume() {
      await start();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await as("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
