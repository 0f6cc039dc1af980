import { type ReadoutMessages, readoutEn } from "./readout-en.js";

type WarningKind = keyof ReadoutMessages["warnings"];
const KINDS = Object.keys(readoutEn.warnings) as WarningKind[];
const SLOT = "\u0000";
const patterns = new Map<WarningKind, RegExp>();

/**
 * A warning of the analysis in the reader's language. The analysis writes its warnings in English
 * (they are part of the tool result the model reads); each kind is a template of readout-en.ts,
 * so the text is read back into its value and written again with the same template of `m`. A
 * warning of no known kind stays as it is.
 */
export function warningText(text: string, m: ReadoutMessages): string {
  for (const kind of KINDS) {
    const match = pattern(kind).exec(text);
    if (match !== null) return m.warnings[kind](match[1] ?? "");
  }
  return text;
}

function pattern(kind: WarningKind): RegExp {
  let found = patterns.get(kind);
  if (found === undefined) {
    const [head = "", tail = ""] = readoutEn.warnings[kind](SLOT).split(SLOT);
    const quote = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    found = new RegExp(`^${quote(head)}([\\s\\S]+?)${quote(tail)}$`);
    patterns.set(kind, found);
  }
  return found;
}
