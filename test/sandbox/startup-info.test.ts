import { describe, expect, it } from "vitest";
import { client, manualClock, sandboxForFile } from "./support.js";

// Contract: the first line's slot_keys lists the slots that answer; the others have their own field.
const sandbox = await sandboxForFile({ clock: manualClock().read });
const api = client(sandbox);
const slots = sandbox.world.slots;

describe("startup facts", () => {
  it("lists in slot_keys only slots that answer, and describes each other slot by what it answers", async () => {
    expect(sandbox.info.slot_keys.length).toBeGreaterThan(0);
    for (const key of sandbox.info.slot_keys) {
      expect((await api.recommend(key, { limit: 1 })).status, key).toBe(200);
    }
    const described = sandbox.info.other_slots.map((s) => s.slot_key);
    // Every slot of the world is in exactly one of the two fields.
    expect([...sandbox.info.slot_keys, ...described].sort()).toEqual(
      slots.map((s) => s.key).sort(),
    );
    expect(described.length).toBeGreaterThan(0);
    for (const other of sandbox.info.other_slots) {
      expect((await api.recommend(other.slot_key, { limit: 1 })).status, other.slot_key).toBe(
        other.status,
      );
    }
  });
});
