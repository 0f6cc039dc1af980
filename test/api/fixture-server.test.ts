import { describe, expect, it } from "vitest";
import { fixtureServerForFile } from "../helpers/fixture-server.js";

// The helper every test/api file relies on: a test must not see the previous test's requests or
// its unused replies.
const server = fixtureServerForFile();

describe("fixtureServerForFile", () => {
  it("records a request and leaves a scripted reply unused", async () => {
    server.reply({ status: 201, body: "first" }, { status: 202, body: "left over" });
    server.setDefault({ status: 204 });
    const res = await fetch(`${server.url}/a`);
    expect(res.status).toBe(201);
    expect(server.requests.map((r) => r.path)).toEqual(["/a"]);
  });

  it("starts the next test with no requests, no leftover reply and the default restored", async () => {
    expect(server.requests).toEqual([]);
    const res = await fetch(`${server.url}/b`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: "no scripted reply" });
    expect(server.requests.map((r) => r.path)).toEqual(["/b"]);
  });
});
