// Marks the bin executable after tsc (tsc keeps the shebang but not the file mode).
import { chmodSync } from "node:fs";

chmodSync(new URL("../dist/cli.js", import.meta.url), 0o755);
