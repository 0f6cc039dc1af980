import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { DOWNLOAD_URL_HOURS } from "./spec.js";

/**
 * Pre-signed download URLs served by the sandbox itself, like a storage host's signed links:
 * `/downloads/<jobId>?expires=<epoch seconds>&signature=<hex HMAC-SHA256(jobId.expires)>`, keyed
 * by a secret made per run. No Authorization header is needed (nor accepted as a substitute).
 */
export const DOWNLOAD_URL_VALIDITY_MS = DOWNLOAD_URL_HOURS * 60 * 60 * 1000;
export const DOWNLOAD_PATH_PREFIX = "/downloads/";

export type SignatureCheck = "ok" | "bad_signature" | "expired";

export function createUrlSigner(baseUrl: () => string, secret: Buffer = randomBytes(32)) {
  const sign = (jobId: string, expires: string): string =>
    createHmac("sha256", secret).update(`${jobId}.${expires}`).digest("hex");

  /** This server's URL for a job's file expiring at `expiresAtMs` (whole seconds). */
  const urlFor = (jobId: string, expiresAtMs: number): string => {
    const expires = String(Math.floor(expiresAtMs / 1000));
    const query = new URLSearchParams({ expires, signature: sign(jobId, expires) });
    return `${baseUrl()}${DOWNLOAD_PATH_PREFIX}${encodeURIComponent(jobId)}?${query.toString()}`;
  };

  return {
    /** A URL valid DOWNLOAD_URL_HOURS from `createdAtMs` (sandbox time), and when it expires. */
    create(jobId: string, createdAtMs: number): { url: string; expiresAtMs: number } {
      const expiresAtMs = Math.floor((createdAtMs + DOWNLOAD_URL_VALIDITY_MS) / 1000) * 1000;
      return { url: urlFor(jobId, expiresAtMs), expiresAtMs };
    },

    urlFor,

    /** Checks the signature first, so an expiry cannot be probed with a forged one. */
    check(jobId: string, params: URLSearchParams, nowMs: number): SignatureCheck {
      const expires = params.get("expires") ?? "";
      const given = params.get("signature") ?? "";
      if (!/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(given)) return "bad_signature";
      const expected = Buffer.from(sign(jobId, expires), "hex");
      if (!timingSafeEqual(expected, Buffer.from(given, "hex"))) return "bad_signature";
      return nowMs >= Number(expires) * 1000 ? "expired" : "ok";
    },
  };
}

export type UrlSigner = ReturnType<typeof createUrlSigner>;
