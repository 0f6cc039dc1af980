import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ApiError,
  AuthenticationError,
  BadRequestError,
  CandidateCacheNotReadyError,
  EngineError,
  LimitExceededError,
  NotFoundError,
  RateLimitedError,
  ResourceNotReadyError,
  ServerError,
} from "../../src/api/errors.js";
import { extractErrorCode, parseRetryAfter } from "../../src/api/to-api-error.js";
import { getLogLevel, setLogLevel } from "../../src/log.js";
import { type FixtureReply, fixtureServerForFile } from "../helpers/fixture-server.js";
import { clientFor, jobJson, SECRET, tempDir } from "./support.js";

const server = fixtureServerForFile();
let dir: { path: string; cleanup: () => Promise<void> };
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(async () => {
  await dir.cleanup();
});

type ErrorClass = abstract new (...args: never[]) => ApiError;

/** One attempt only, so the mapping (not the retry) is under test. */
async function failWith(
  operation: "recommend" | "create" | "get" | "metrics",
  reply: FixtureReply,
): Promise<ApiError> {
  const client = clientFor(server, dir.path, { retry: { attempts: 1 } });
  server.reply(reply);
  try {
    const call =
      operation === "recommend"
        ? client.recommend("slot", {})
        : operation === "create"
          ? client.createExportJob({ type: "campaign_event_data", campaign_id: "c" })
          : operation === "get"
            ? client.getExportJob("job-1")
            : client.campaignMetrics({ task_from: "2026-11-01", task_to: "2026-11-02" });
    await call;
  } catch (error) {
    return error as ApiError;
  } finally {
    await client.close();
  }
  throw new Error("expected the call to fail");
}

describe("spec 7.1 recommend statuses", () => {
  it.each<[number, ErrorClass, string]>([
    [401, AuthenticationError, "authentication"],
    [404, NotFoundError, "not_found"],
    [412, CandidateCacheNotReadyError, "cache_not_ready"],
    [502, EngineError, "engine_error"],
    [400, BadRequestError, "bad_request"],
    [500, ServerError, "server_error"],
  ])("%i -> %o", async (status, type, kind) => {
    const error = await failWith("recommend", { status, json: { message: "nope" } });
    expect(error).toBeInstanceOf(type);
    expect(error.kind).toBe(kind);
    expect(error.status).toBe(status);
    expect(error.operation).toBe("recommend");
    expect(error.detail).toBe('{"message":"nope"}');
    expect(error.message).not.toContain("nope");
  });

  it("says which key an authentication failure rejected", async () => {
    const error = await failWith("recommend", { status: 401, body: "" });
    expect(error.message).toBe(
      "Recommendation failed: the service rejected the recommend secret key (HTTP 401).",
    );
    expect(error.detail).toBeUndefined();
    const other = await failWith("metrics", { status: 401, body: "" });
    expect(other.message).toContain("rejected the secret key (HTTP 401)");
  });
});

describe("spec 7.2 export job codes, in every body shape", () => {
  const shapes: [string, (code: string) => FixtureReply][] = [
    ["code", (c) => ({ status: 400, json: { code: c, message: "x" } })],
    ["error_code", (c) => ({ status: 400, json: { error_code: c } })],
    ["errorCode", (c) => ({ status: 400, json: { errorCode: c } })],
    ["error string", (c) => ({ status: 400, json: { error: c } })],
    ["error.code", (c) => ({ status: 400, json: { error: { code: c, message: "m" } } })],
    ["errors[0].code", (c) => ({ status: 400, json: { errors: [{ code: c }] } })],
    ["text body", (c) => ({ status: 400, body: `Error: ${c} (request 123)` })],
    ["generic error plus code", (c) => ({ status: 400, json: { error: "Bad Request", code: c } })],
  ];
  const codes: [string, ErrorClass][] = [
    ["UnAuthorized", AuthenticationError],
    ["ResourceNotFound", NotFoundError],
    ["LimitExceeded", LimitExceededError],
    ["ResourceNotReady", ResourceNotReadyError],
  ];
  for (const [shape, make] of shapes) {
    it.each(codes)(`%s as ${shape}`, async (code, type) => {
      const error = await failWith("create", make(code));
      expect(error).toBeInstanceOf(type);
      expect(error.status).toBe(400);
      expect(error.code).toBe(code);
      expect(error.operation).toBe("create_export_job");
      expect(error.detail).toBeDefined();
    });
  }

  it("400 without a code is a malformed request; an unknown code is kept", async () => {
    const bare = await failWith("create", { status: 400, body: "" });
    expect(bare).toBeInstanceOf(BadRequestError);
    expect(bare.code).toBeUndefined();
    const unknown = await failWith("get", { status: 400, json: { code: "InvalidParameter" } });
    expect(unknown).toBeInstanceOf(BadRequestError);
    expect(unknown.code).toBe("InvalidParameter");
    expect(unknown.message).toContain("InvalidParameter");
  });

  it("matches codes regardless of case and separators", async () => {
    expect(
      await failWith("get", { status: 400, json: { code: "RESOURCE_NOT_FOUND" } }),
    ).toBeInstanceOf(NotFoundError);
    expect(await failWith("get", { status: 400, json: { code: "Unauthorized" } })).toBeInstanceOf(
      AuthenticationError,
    );
  });

  it("500 is a server error", async () => {
    const error = await failWith("create", { status: 500, body: "Internal Server Error" });
    expect(error).toBeInstanceOf(ServerError);
    expect(error.status).toBe(500);
  });

  it("LimitExceeded states the service's limits with status and code", async () => {
    const error = await failWith("create", { status: 400, json: { code: "LimitExceeded" } });
    expect(error.message).toContain("over 2,000,000 sends or more than 120 rounds");
    expect(error.message).toContain("(HTTP 400, LimitExceeded)");
    expect(error.transient).toBe(false);
  });
});

describe("messages are facts; advice is the tool layer's", () => {
  const ADVICE =
    /\b(try again|retry(?!-after)|check|narrow|choose|split|later|in a (little )?while)\b/i;
  it.each<["recommend" | "create" | "get" | "metrics", FixtureReply]>([
    ["recommend", { status: 401, body: "" }],
    ["recommend", { status: 404, body: "" }],
    ["recommend", { status: 412, body: "" }],
    ["recommend", { status: 502, body: "" }],
    ["create", { status: 429, headers: { "retry-after": "30" } }],
    ["metrics", { status: 429, body: "" }],
    ["get", { status: 500, body: "" }],
    ["create", { status: 400, json: { code: "UnAuthorized" } }],
    ["create", { status: 400, json: { code: "ResourceNotFound" } }],
    ["create", { status: 400, json: { code: "LimitExceeded" } }],
    ["create", { status: 400, json: { code: "ResourceNotReady" } }],
    ["get", { status: 400, json: { code: "InvalidParameter" } }],
    ["get", { status: 404, body: "" }],
    ["metrics", { status: 404, body: "" }],
  ])("%s %j", async (operation, reply) => {
    const error = await failWith(operation, reply);
    expect(error.message).not.toMatch(ADVICE);
    expect(error.message).not.toMatch(/CRM_[A-Z_]+/);
    expect(error.message).toContain(" failed: ");
    expect(error.message).toContain(`HTTP ${error.status}`);
  });
});

describe("status versus code", () => {
  it("a status the spec defines wins over a code mentioned in the body", async () => {
    const text = { body: "UnAuthorized? no: slot missing" };
    expect(await failWith("recommend", { status: 404, ...text })).toBeInstanceOf(NotFoundError);
    expect(await failWith("recommend", { status: 502, ...text })).toBeInstanceOf(EngineError);
    expect(await failWith("get", { status: 500, json: { code: "LimitExceeded" } })).toBeInstanceOf(
      ServerError,
    );
  });

  it("a known code refines a 400 even on recommend", async () => {
    const error = await failWith("recommend", { status: 400, json: { code: "UnAuthorized" } });
    expect(error).toBeInstanceOf(AuthenticationError);
  });
});

describe("a JSON body's own code decides, not its free text", () => {
  it("a code field wins over a known code mentioned in the message", async () => {
    const error = await failWith("create", {
      status: 400,
      json: { code: "ValidationError", message: "from is invalid; see ResourceNotReady docs" },
    });
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.code).toBe("ValidationError");
  });

  it("a message merely starting with a code's word is not that code", async () => {
    const error = await failWith("create", {
      status: 400,
      json: { message: "Unauthorized fields: campaign_id is required" },
    });
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.code).toBeUndefined();
    expect(extractErrorCode('{"error":{"message":"LimitExceeded soon, maybe"}}')).toBeUndefined();
  });

  it("a message that is nothing but a known code is that code; text bodies are still scanned", async () => {
    expect(
      await failWith("create", { status: 400, json: { message: "ResourceNotReady" } }),
    ).toBeInstanceOf(ResourceNotReadyError);
    expect(extractErrorCode('"LimitExceeded"')).toBe("LimitExceeded");
    expect(extractErrorCode("400 Bad Request: LimitExceeded")).toBe("LimitExceeded");
  });
});

describe("Retry-After on any status", () => {
  it.each<["get" | "recommend", number]>([
    ["get", 503],
    ["get", 500],
    ["recommend", 412],
    ["recommend", 502],
  ])("%s %i carries retryAfterMs", async (operation, status) => {
    const error = await failWith(operation, { status, headers: { "retry-after": "7" } });
    expect(error.status).toBe(status);
    expect(error.retryAfterMs).toBe(7_000);
  });
});

describe("429 Retry-After", () => {
  it("reads delay-seconds", async () => {
    const error = await failWith("create", { status: 429, headers: { "retry-after": "42" } });
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfterMs).toBe(42_000);
    expect(error.message).toContain("42 seconds");
  });

  it("reads an HTTP date against the injectable clock", async () => {
    const now = Date.parse("2026-11-22T09:00:00Z");
    const client = clientFor(server, dir.path, { retry: { attempts: 1 }, now: () => now });
    server.reply({ status: 429, headers: { "retry-after": "Sun, 22 Nov 2026 09:01:30 GMT" } });
    const error = (await client
      .createExportJob({ type: "campaign_event_data", campaign_id: "c" })
      .catch((e: unknown) => e)) as RateLimitedError;
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.retryAfterMs).toBe(90_000);
    await client.close();
  });

  it("tolerates a missing or garbled header", async () => {
    const error = (await failWith("create", {
      status: 429,
      headers: { "retry-after": "soon" },
    })) as RateLimitedError;
    expect(error.retryAfterMs).toBeUndefined();
    expect(parseRetryAfter(undefined, 0)).toBeUndefined();
    expect(parseRetryAfter("Thu, 01 Jan 1970 00:00:00 GMT", 5_000)).toBe(0);
  });

  it("accepts only delay-seconds and the HTTP date forms of RFC 9110", () => {
    const now = Date.parse("2026-11-22T09:00:00Z");
    for (const lenient of ["-1", "Mon 10", "1.5", "1e3", "2026-11-22T09:01:00Z", " "]) {
      expect(parseRetryAfter(lenient, now), lenient).toBeUndefined();
    }
    expect(parseRetryAfter(" 120 ", now)).toBe(120_000);
    expect(parseRetryAfter("Sun, 22 Nov 2026 09:00:10 GMT", now)).toBe(10_000);
    expect(parseRetryAfter("Sunday, 22-Nov-26 09:00:20 GMT", now)).toBe(20_000);
    expect(parseRetryAfter("Sun Nov 22 09:00:30 2026", now)).toBe(30_000);
  });
});

describe("metrics errors (statuses not shown in the spec)", () => {
  it.each<[FixtureReply, ErrorClass]>([
    [{ status: 400, json: { code: "UnAuthorized" } }, AuthenticationError],
    [{ status: 401, body: "" }, AuthenticationError],
    [{ status: 403, body: "Forbidden" }, AuthenticationError],
    [{ status: 404, body: "" }, NotFoundError],
    [{ status: 400, json: { message: "task_to: invalid" } }, BadRequestError],
    [{ status: 429, headers: { "retry-after": "1" } }, RateLimitedError],
    [{ status: 503, body: "" }, ServerError],
  ])("%o", async (reply, type) => {
    const error = await failWith("metrics", reply);
    expect(error).toBeInstanceOf(type);
    expect(error.operation).toBe("campaign_metrics");
  });
});

describe("detail", () => {
  it("is logged at debug level, redacted, when an HTTP error is mapped", async () => {
    const lines: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    const level = getLogLevel();
    setLogLevel("debug");
    try {
      await failWith("get", { status: 400, json: { code: "Odd", hint: `key ${SECRET} rejected` } });
    } finally {
      setLogLevel(level);
      process.stderr.write = original;
    }
    const logged = lines.join("");
    expect(logged).toContain("HTTP 400");
    expect(logged).toContain("rejected");
    expect(logged).not.toContain(SECRET);
  });

  it("is truncated to a few hundred characters", async () => {
    const error = await failWith("get", { status: 500, body: "x".repeat(5000) });
    expect(error.detail?.length).toBeLessThan(600);
    expect(error.message.length).toBeLessThan(200);
  });

  it("extractErrorCode ignores bodies without a code", () => {
    expect(extractErrorCode("")).toBeUndefined();
    expect(extractErrorCode('{"message":"something broke"}')).toBeUndefined();
    expect(extractErrorCode("[1,2]")).toBeUndefined();
  });
});

it("a 200 job is not an error (sanity check of the helper)", async () => {
  const client = clientFor(server, dir.path);
  server.reply({ json: jobJson() });
  await expect(client.getExportJob("job-1")).resolves.toMatchObject({ _id: "job-1" });
  await client.close();
});
