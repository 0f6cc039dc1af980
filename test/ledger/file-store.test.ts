import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JobLedger } from "../../src/ledger/ledger.js";
import { describeLedgerStore } from "./store-suite.js";

// One data folder for the suite; each test has its own scope, so its own ledger file.
let dir = "";
describeLedgerStore("file ledger", {
  async setup() {
    dir = mkdtempSync(join(tmpdir(), "file-store-"));
  },
  async teardown() {
    rmSync(dir, { recursive: true, force: true });
  },
  open: (scope, budget, now, monotonic) => new JobLedger(dir, budget, now, scope, monotonic),
});
