/** Types of build-reference-host.mjs, for the tests that build the reference host. */
export const HOST_DIR: string;
export const UPSTREAM_SANDBOX_URL: string;
export function checkVendoredFiles(): { commit: string; files: Record<string, string> };
export function buildReferenceHost(options: {
  outDir: string;
  sandboxUrl?: string;
}): Promise<{ index: string; sandbox: string }>;
