import { describe, expect, it } from "vitest";
import { must } from "../helpers/must.js";
import { client, manualClock, sandboxForFile } from "./support.js";

// Spec 2.3 download rules: valid 24 h from the URL's creation, repeatable, not extended by re-reads.
const clock = manualClock();
const sandbox = await sandboxForFile({ clock: clock.read });
const api = client(sandbox, clock);
const campaignId = sandbox.world.campaigns.find(
  (c) => c.role === "normal" && c.tasks.some((t) => t.aggregated),
)?._id;
const HOUR = 3_600_000;

describe("signed download URLs", () => {
  it("serve the file repeatedly without Authorization until 24 h after the URL was made", async () => {
    const job = await api.exportFile({ type: "campaign_event_data", campaign_id: campaignId });
    const url = String(job.download_url);
    expect(url.startsWith(`${sandbox.base_url}/downloads/`)).toBe(true);
    const madeAt = clock.read();
    const expiresAt = Date.parse(String(job.download_url_expires_at));
    const first = await fetch(url);
    expect(first.status).toBe(200);
    expect(Number(first.headers.get("content-length"))).toBe(job.file_size);
    const firstBytes = Buffer.from(await first.arrayBuffer());

    clock.advance(23 * HOUR);
    // Re-reading the job gives the same URL and expiry.
    const again = (await api.getJob(String(job._id))).body;
    expect(again.download_url).toBe(url);
    expect(again.download_url_expires_at).toBe(job.download_url_expires_at);
    const second = await fetch(url);
    expect(second.status).toBe(200);
    expect(Buffer.from(await second.arrayBuffer()).equals(firstBytes)).toBe(true);

    // Sandbox time at the URL's making was TEST_NOW + elapsed; its expiry is 24 h after that.
    expect(expiresAt - Date.parse(String(again.created_at))).toBeLessThanOrEqual(
      24 * HOUR + 61_000,
    );
    clock.advance(madeAt + 24 * HOUR - clock.read() + 1_000);
    const expired = await fetch(url);
    expect(expired.status).toBe(403);
    expect(((await expired.json()) as { code: string }).code).toBe("AccessDenied");
    const reread = (await api.getJob(String(job._id))).body;
    expect(reread.download_url).toBe(url);
    expect(reread.status).toBe("completed");
    // A later create clears files behind expired URLs; the old job still reads the same.
    await api.exportFile({ type: "campaign_event_data", campaign_id: campaignId });
    expect((await api.getJob(String(job._id))).body.file_size).toBe(job.file_size);
    expect((await fetch(url)).status).toBe(403);
  });

  it("answer HEAD with the headers only", async () => {
    const job = await api.exportFile({ type: "campaign_event_data", campaign_id: campaignId });
    const res = await fetch(String(job.download_url), { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(Number(res.headers.get("content-length"))).toBe(job.file_size);
    expect(res.headers.get("content-disposition")).toContain(`${job.file_name}.csv`);
  });

  it("refuse a tampered signature, expiry or job id", async () => {
    const job = await api.exportFile({ type: "campaign_event_data", campaign_id: campaignId });
    const url = new URL(String(job.download_url));
    const signature = must(url.searchParams.get("signature"), "signature in the download URL");
    const variants: URL[] = [];
    const flipped = new URL(url);
    flipped.searchParams.set(
      "signature",
      `${signature.slice(0, -1)}${signature.endsWith("0") ? "1" : "0"}`,
    );
    variants.push(flipped);
    const later = new URL(url);
    later.searchParams.set("expires", String(Number(url.searchParams.get("expires")) + 86_400));
    variants.push(later);
    const noSig = new URL(url);
    noSig.searchParams.delete("signature");
    variants.push(noSig);
    const otherJob = new URL(url);
    otherJob.pathname = "/downloads/000000000000000000000000";
    variants.push(otherJob);
    for (const variant of variants) {
      const res = await fetch(variant);
      expect(res.status).toBe(403);
      await res.arrayBuffer();
    }
    expect((await fetch(url)).status).toBe(200);
  });
});
