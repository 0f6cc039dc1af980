import { TIME_ZONE } from "./time.js";
import type { World } from "./types.js";

/**
 * A second application of the sandbox that holds no data. It exists so that "a key of another
 * application is rejected" (spec 5) is a real case: it has its own keys, its metrics are empty,
 * every campaign, scenario and job is unknown to it, and it has no recommendation slot.
 */
export function createEmptyWorld(applicationId: string, now: number): World {
  return {
    applicationId,
    timeZone: TIME_ZONE,
    now,
    products: [],
    campaigns: [],
    scenarios: [],
    slots: [],
    sampleUserIds: [],
    campaign: () => undefined,
    scenario: () => undefined,
    roundRows: () => [],
    taskMetrics: (task) => {
      throw new RangeError(`${applicationId} has no task ${task._id}`);
    },
    campaignMetrics: () => ({ campaigns: [] }),
    scenarioReport: () => [],
    recommend: () => ({ status: 404 }),
  };
}
