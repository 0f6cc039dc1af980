import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileCatalogueStore } from "../../src/history/catalogue-file.js";
import { HistoryError } from "../../src/history/errors.js";
import { campaignRecord, describeCatalogueStore } from "./catalogue-suite.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "catalogue-file-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describeCatalogueStore("JSON file", {
  open: (scope) => new FileCatalogueStore(join(dir, `${scope}.json`)),
});

describe("the catalogue file", () => {
  it("refuses a file of a newer format or a broken record, naming it, rather than starting over", async () => {
    const newer = join(dir, "newer.json");
    await writeFile(
      newer,
      JSON.stringify({ format: 2, generation: 1, exports: [], partitions: [] }),
    );
    const error = await new FileCatalogueStore(newer).read().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HistoryError);
    expect((error as HistoryError).message).toContain(
      "written by a newer crm-insights-mcp (format 2)",
    );
    const broken = join(dir, "broken.json");
    await writeFile(
      broken,
      JSON.stringify({
        format: 1,
        generation: 1,
        exports: [{ ...campaignRecord, rows: -1 }],
        partitions: [],
      }),
    );
    await expect(new FileCatalogueStore(broken).read()).rejects.toThrow(/exports\.0\.rows/);
  });
});
