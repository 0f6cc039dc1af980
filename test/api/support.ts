import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ApiClient, type ApiClientExtras, createApiClient } from "../../src/api/client.js";
import type { ApiClientOptions } from "../../src/api/types.js";
import type { FixtureServer } from "../helpers/fixture-server.js";

export const APP_ID = "app/1 ü";
export const SECRET = "export-secret-key-0001";
export const RECOMMEND_SECRET = "recommend-secret-key-0002";

/** A client aimed at a fixture server, with small retry delays so tests stay fast. */
export function clientFor(
  server: FixtureServer,
  dataDir: string,
  overrides: Partial<ApiClientOptions> & ApiClientExtras = {},
): ApiClient {
  return createApiClient({
    baseUrl: server.url,
    realtimeBaseUrl: server.url,
    applicationId: APP_ID,
    secretKey: SECRET,
    recommendSecretKey: RECOMMEND_SECRET,
    dataDir,
    retry: { attempts: 4, baseDelayMs: 5, maxDelayMs: 20 },
    ...overrides,
  });
}

export async function tempDir(): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), "crm-api-test-"));
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) };
}

/** Every file (not directory) under `dir`, relative paths. */
export async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath ?? e.path, e.name).slice(dir.length + 1));
}

export function jobJson(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    _id: "job-1",
    application_id: APP_ID,
    type: "campaign_event_data",
    status: "triggered",
    campaign_id: "cmp-1",
    created_at: "2026-11-22T00:00:00.000Z",
    updated_at: "2026-11-22T00:00:00.000Z",
    ...overrides,
  };
}

export function taskJson(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const money = { value: 0, currency: "KRW" };
  return {
    _id: "task-1",
    campaign_id: "cmp-1",
    scheduled_at: "2026-11-01T01:00:00.000Z",
    sent_at: "2026-11-01T01:00:05.000Z",
    channel: "alimtalk",
    sent_count: 10,
    received_count: 9,
    open_count: 4,
    click_count: 2,
    click_target_counts: [],
    purchase_count: 1,
    purchase_count_by_click: 1,
    purchase_count_by_open: 0,
    purchase_count_by_received: 0,
    revenue: 12000,
    revenue_currency: "KRW",
    revenue_by_click: money,
    revenue_by_open: money,
    revenue_by_received: money,
    cost: 80,
    cost_currency: "KRW",
    sent_user_count: 10,
    received_user_count: 9,
    open_user_count: 4,
    click_user_count: 2,
    purchase_user_count_by_click: 1,
    purchase_user_count_by_open: 0,
    purchase_user_count_by_received: 0,
    open_rate: 0.44,
    conversion_rate: 0.1,
    roas: 150,
    ...overrides,
  };
}

export function campaignJson(tasks: Record<string, unknown>[]): Record<string, unknown> {
  return {
    _id: "cmp-1",
    name: "가을 세일",
    tags: ["sale"],
    schedule_type: "once",
    conversion: { event_type: "purchase", window_unit: "day", window_amount: 3 },
    is_ab_test: false,
    tasks,
  };
}
