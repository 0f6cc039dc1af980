import { describe, expect, it } from "vitest";
import { client, manualClock, sandboxForFile } from "./support.js";

// Spec 8 limits creations to "10 calls per 10 minutes" without saying whether refused calls
// count; the sandbox (README, "Check order on create") counts only accepted creations.
const clock = manualClock();
const sandbox = await sandboxForFile({ clock: clock.read, jobSeconds: 0 });
const api = client(sandbox);
const byRole = (role: string) => sandbox.world.campaigns.find((c) => c.role === role)?._id;
const valid = () => ({ type: "campaign_event_data", campaign_id: byRole("normal") });

describe("the create limit counts accepted creations only", () => {
  it("refusals (400 of each kind, 429) take no place in the window", async () => {
    const refusals: Array<{ body: unknown; key?: string | null; code?: string }> = [
      { body: { type: "campaign_event_data", campaign_id: "cmp_nope" }, code: "ResourceNotFound" },
      {
        body: { type: "campaign_event_data", campaign_id: byRole("not_ready") },
        code: "ResourceNotReady",
      },
      {
        body: { type: "campaign_event_data", campaign_id: byRole("huge_sends") },
        code: "LimitExceeded",
      },
      { body: valid(), key: "sbx_sk_wrong", code: "UnAuthorized" },
      { body: valid(), key: null, code: "UnAuthorized" },
      { body: { type: "campaign_event_data" } },
      { body: "not json" },
    ];
    // More refusals than the limit, all inside one window.
    for (let round = 0; round < 2; round += 1) {
      for (const refusal of refusals) {
        const res = await api.createJob(refusal.body, refusal.key);
        expect(res.status).toBe(400);
        expect(res.body.code).toBe(refusal.code);
      }
    }
    for (let i = 0; i < 10; i += 1) {
      expect((await api.createJob(valid())).status).toBe(200);
      clock.advance(10_000);
    }
    const limited = await api.createJob(valid());
    expect(limited.status).toBe(429);
    // The first accepted creation leaves the window 600 s after it; 100 s have passed.
    expect(limited.headers.get("retry-after")).toBe("500");
    // Refused calls while limited do not push the next slot back.
    for (let i = 0; i < 5; i += 1) expect((await api.createJob(valid())).status).toBe(429);
    clock.advance(499_000);
    expect((await api.createJob(valid())).headers.get("retry-after")).toBe("1");
    clock.advance(1_000);
    expect((await api.createJob(valid())).status).toBe(200);
  });
});
