import { describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/index.js";
import { client, TEST_NOW } from "./support.js";

// startSandbox/close as the MCP server's sandbox mode and tests use them.
describe("startSandbox", () => {
  it("listens on a free loopback port and closes promptly, even mid-export", async () => {
    const sandbox = await startSandbox({ now: TEST_NOW, jobSeconds: 0 });
    expect(sandbox.base_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sandbox.realtime_base_url).toBe(sandbox.base_url);
    expect(sandbox.campaign_ids).toEqual(sandbox.world.campaigns.map((c) => c._id));
    const api = client(sandbox);
    const huge = sandbox.world.campaigns.find((c) => c.role === "huge_sends");
    const task = huge?.tasks.find((t) => t.aggregated);
    const day = new Date((task?.scheduled_at ?? 0) + 9 * 3_600_000).toISOString().slice(0, 10);
    const created = await api.createJob({
      type: "campaign_event_data",
      campaign_id: huge?._id,
      from: day,
      to: day,
    });
    expect(created.status).toBe(200);
    const started = Date.now();
    await sandbox.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    await expect(fetch(`${sandbox.base_url}/`)).rejects.toThrow();
    // close() is idempotent.
    await sandbox.close();
  });

  it("makes the job of a create whose connection was dropped (it counts toward the limit)", async () => {
    const sandbox = await startSandbox({ now: TEST_NOW, jobSeconds: 0 });
    try {
      const api = client(sandbox);
      const body = {
        type: "campaign_event_data",
        campaign_id: sandbox.world.campaigns.find((c) => c.role === "normal")?._id,
      };
      sandbox.faults.inject({ operation: "create_export_job", action: { type: "drop" } });
      await expect(api.createJob(body)).rejects.toThrow();
      for (let i = 0; i < 9; i += 1) expect((await api.createJob(body)).status).toBe(200);
      expect((await api.createJob(body)).status).toBe(429);
    } finally {
      await sandbox.close();
    }
  });

  it("pins keys and refuses a bad jobSeconds", async () => {
    await expect(startSandbox({ jobSeconds: -1 })).rejects.toThrow(/jobSeconds/);
    const sandbox = await startSandbox({
      now: TEST_NOW,
      secretKey: "sbx_sk_one",
      recommendSecretKey: "sbx_live_two",
    });
    try {
      expect([sandbox.secret_key, sandbox.recommend_secret_key]).toEqual([
        "sbx_sk_one",
        "sbx_live_two",
      ]);
    } finally {
      await sandbox.close();
    }
  });
});
