/**
 * What each event type counts as, from one table of rules: summarize_export counts with
 * `roleOf`, and query_export's `event_role` column is the same rules as a DuckDB CASE expression
 * (`eventRoleSql`), so a figure of one tool is the same figure in the other. The role names are
 * the contract's `event_role` values. The codes keep the summary's per-row switch on small
 * integers.
 */

export const ROLES = [
  "sent",
  "received",
  "failed",
  "control",
  "open",
  "click",
  "conversion",
  "other",
] as const;

export type Role = (typeof ROLES)[number];

/**
 * A rule's test: the type is this name; it is the conversion type asked for (never true when
 * none was); it ends with this suffix; no conversion type was asked for; always.
 */
type Test =
  | { kind: "is"; name: string }
  | { kind: "is_conversion_type" }
  | { kind: "ends_with"; suffix: string }
  | { kind: "no_conversion_type" }
  | { kind: "always" };

/** The first rule whose test holds gives the role. */
export const ROLE_RULES: readonly { test: Test; role: Role }[] = [
  { test: { kind: "is", name: "message_sent" }, role: "sent" },
  { test: { kind: "is", name: "message_received" }, role: "received" },
  { test: { kind: "is", name: "message_failed" }, role: "failed" },
  { test: { kind: "is", name: "control_assigned" }, role: "control" },
  { test: { kind: "is", name: "landing_clicked" }, role: "click" },
  // An explicit choice wins over the suffix rule (a *_clicked type can be the conversion).
  { test: { kind: "is_conversion_type" }, role: "conversion" },
  // An unknown channel's open event still counts as an open: the suffix is what marks it.
  { test: { kind: "ends_with", suffix: "_opened" }, role: "open" },
  { test: { kind: "ends_with", suffix: "_clicked" }, role: "open" },
  // With no conversion type given, every other event is a conversion (the contract's default).
  { test: { kind: "no_conversion_type" }, role: "conversion" },
  { test: { kind: "always" }, role: "other" },
];

/**
 * The conversion type as both tools use it: trimmed, and an empty text is none given (then the
 * default rule applies).
 */
export function conversionTypeOf(input: string | undefined): string | undefined {
  return input?.trim() || undefined;
}

function holds(test: Test, name: string, conversionType: string | undefined): boolean {
  switch (test.kind) {
    case "is":
      return name === test.name;
    case "is_conversion_type":
      return conversionType !== undefined && name === conversionType;
    case "ends_with":
      return name.endsWith(test.suffix);
    case "no_conversion_type":
      return conversionType === undefined;
    case "always":
      return true;
  }
}

/** The role of event type `name` (an empty field is ""), given the conversion type asked for. */
export function roleOf(name: string, conversionType: string | undefined): Role {
  for (const rule of ROLE_RULES) {
    if (holds(rule.test, name, conversionType)) return rule.role;
  }
  return "other";
}

/**
 * A SQL string literal of any text: DuckDB's parser ends a statement's text at a NUL character,
 * so one is written as chr(0) between the literals of the parts around it.
 */
function sqlText(text: string): string {
  const parts = text.split("\0").map((part) => `'${part.replaceAll("'", "''")}'`);
  return parts.length === 1 ? (parts[0] as string) : `(${parts.join(" || chr(0) || ")})`;
}

/**
 * The same rules as a DuckDB expression over the VARCHAR expression `column` (NULL, an empty
 * field, is ""). Suffixes are compared with ends_with, never LIKE, whose `_` and `%` are
 * wildcards.
 */
export function eventRoleSql(column: string, conversionType: string | undefined): string {
  const name = `coalesce(${column}, '')`;
  const whens: string[] = [];
  for (const { test, role } of ROLE_RULES) {
    let condition: string | undefined;
    switch (test.kind) {
      case "is":
        condition = `${name} = ${sqlText(test.name)}`;
        break;
      case "is_conversion_type":
        if (conversionType === undefined) continue;
        condition = `${name} = ${sqlText(conversionType)}`;
        break;
      case "ends_with":
        condition = `ends_with(${name}, ${sqlText(test.suffix)})`;
        break;
      case "no_conversion_type":
        if (conversionType !== undefined) continue;
        break;
      case "always":
        break;
    }
    // A test that always holds here ends the expression.
    if (condition === undefined) return `CASE ${whens.join(" ")} ELSE ${sqlText(role)} END`;
    whens.push(`WHEN ${condition} THEN ${sqlText(role)}`);
  }
  return `CASE ${whens.join(" ")} ELSE 'other' END`;
}

export const ROLE_CODE: Record<Role, number> = {
  sent: 0,
  received: 1,
  failed: 2,
  control: 3,
  open: 4,
  click: 5,
  conversion: 6,
  other: 7,
};

export const ROLE_NAMES = Object.keys(ROLE_CODE) as Role[];
