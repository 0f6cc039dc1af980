import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DateTime } from "luxon";
import { log } from "../log.js";
import { registerSecret } from "../redact.js";
import { createSandboxClock, parseNowOption } from "./clock.js";
import { createUrlSigner } from "./download-urls.js";
import { createExportJobs } from "./export-jobs.js";
import { createFaultInjector } from "./faults.js";
import { folderJobRecords } from "./job-records.js";
import { createRequestHandler, type SandboxApp } from "./server.js";
import type { OtherSlot, RunningSandbox, SandboxInfo, SandboxOptions } from "./types.js";
import { createEmptyWorld } from "./world/empty.js";
import type { SandboxSlot, World, WorldOptions } from "./world/types.js";

export type * from "./types.js";

const DEFAULT_SEED = 42;
const DEFAULT_JOB_SECONDS = 3;
/** The data-less second application (its keys are only on `RunningSandbox.otherApplication`). */
export const OTHER_APPLICATION_ID = "sandbox-app-2";

/**
 * Starts the sandbox service on a loopback port: the four endpoints of spec 4 over the synthetic
 * world, plus `/downloads/...` for export files. Resolves once it listens.
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const realClock = options.clock ?? Date.now;
  const clock = createSandboxClock(parseNowOption(options.now), realClock);
  const seed = options.seed ?? DEFAULT_SEED;
  const jobSeconds = options.jobSeconds ?? DEFAULT_JOB_SECONDS;
  if (!Number.isFinite(jobSeconds) || jobSeconds < 0) throw new Error("jobSeconds must be >= 0");
  const world =
    options.world ??
    (await loadWorld({
      seed,
      now: clock.startedAt,
      ...(options.hugeAbTest === true ? { hugeAbTest: true } : {}),
    }));

  const secretKey = options.secretKey ?? `sbx_sk_${randomBytes(18).toString("hex")}`;
  let recommendKey = options.recommendSecretKey ?? `sbx_live_${randomBytes(18).toString("hex")}`;
  if (options.recommendSecretKey === undefined && recommendKey === secretKey) {
    recommendKey = `sbx_live_${randomBytes(18).toString("hex")}`;
  }
  registerSecret(secretKey);
  registerSecret(recommendKey);

  const dataDir = options.dataDir;
  const ownDir = options.fileDir === undefined && dataDir === undefined;
  const fileDir =
    options.fileDir ??
    (dataDir === undefined
      ? await mkdtemp(join(tmpdir(), "crm-sandbox-"))
      : join(dataDir, "files"));
  await mkdir(fileDir, { recursive: true });
  const faults = createFaultInjector();

  // The base URL is known only once the port is; the signer reads it lazily through this box.
  const base = { url: "" };
  const signer = createUrlSigner(() => base.url);
  const jobsOf = (appWorld: World) =>
    createExportJobs({
      world: appWorld,
      clock,
      jobSeconds,
      fileDir,
      signer,
      offsetMinutes: DateTime.fromMillis(clock.startedAt, { zone: appWorld.timeZone }).offset,
      ...(dataDir === undefined
        ? {}
        : { records: folderJobRecords(join(dataDir, "jobs", appWorld.applicationId)) }),
      ...(options.csvShape !== undefined ? { csvShape: options.csvShape } : {}),
    });
  const otherKeys = {
    secretKey: `sbx_sk_${randomBytes(18).toString("hex")}`,
    recommendKey: `sbx_live_${randomBytes(18).toString("hex")}`,
  };
  registerSecret(otherKeys.secretKey);
  registerSecret(otherKeys.recommendKey);
  const otherWorld = createEmptyWorld(OTHER_APPLICATION_ID, clock.startedAt);
  const apps: SandboxApp[] = [
    { world, secretKey, recommendKey, jobs: jobsOf(world) },
    { world: otherWorld, ...otherKeys, jobs: jobsOf(otherWorld) },
  ];
  const server = createServer(createRequestHandler({ apps, clock, faults, signer }));
  // Idle keep-alive sockets must not hold close() up.
  server.keepAliveTimeout = 5_000;

  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    // A busy port must not leave the temp folder behind.
    if (ownDir) await rm(fileDir, { recursive: true, force: true });
    throw error;
  }
  base.url = `http://${urlHost(server.address() as AddressInfo)}`;

  const info: SandboxInfo = {
    base_url: base.url,
    realtime_base_url: base.url,
    application_id: world.applicationId,
    secret_key: secretKey,
    recommend_secret_key: recommendKey,
    campaign_ids: world.campaigns.map((campaign) => campaign._id),
    scenario_ids: world.scenarios.map((scenario) => scenario._id),
    ...describeSlots(world.slots),
  };
  log.info("sandbox listening", { base_url: base.url, seed, jobSeconds });

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await Promise.all(apps.map((app) => app.jobs.close()));
      await closed;
      if (ownDir) await rm(fileDir, { recursive: true, force: true });
    })();
    return closing;
  };

  const otherApplication = {
    application_id: OTHER_APPLICATION_ID,
    secret_key: otherKeys.secretKey,
    recommend_secret_key: otherKeys.recommendKey,
  };
  return { ...info, info, world, faults, otherApplication, close };
}

/** `slot_keys` holds only the slots that answer at once; the others say what they answer. */
export function describeSlots(
  slots: readonly SandboxSlot[],
): Pick<SandboxInfo, "slot_keys" | "other_slots"> {
  const slotKeys: string[] = [];
  const others: OtherSlot[] = [];
  for (const slot of slots) {
    if (slot.state !== "active") {
      others.push({
        slot_key: slot.key,
        state: slot.state,
        status: 404,
        note: `not active (${slot.state}): recommend answers 404`,
      });
    } else if (slot.warmupMs > 0) {
      const seconds = Math.ceil(slot.warmupMs / 1000);
      others.push({
        slot_key: slot.key,
        state: slot.state,
        status: 412,
        answers_after_seconds: seconds,
        note: `candidate cache warming: recommend answers 412 for the first ${seconds}s after start`,
      });
    } else {
      slotKeys.push(slot.key);
    }
  }
  return { slot_keys: slotKeys, other_slots: others };
}

function urlHost(address: AddressInfo): string {
  const host = address.address;
  if (host === "0.0.0.0" || host === "::") return `127.0.0.1:${address.port}`;
  return address.family === "IPv6" ? `[${host}]:${address.port}` : `${host}:${address.port}`;
}

/** Loaded on demand so a caller passing its own world never pays for building one. */
async function loadWorld(options: WorldOptions): Promise<World> {
  const { createWorld } = await import("./world/index.js");
  return createWorld(options);
}
