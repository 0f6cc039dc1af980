/**
 * How an answer of query_export is drawn, chosen from its shape: a time column with numbers gives
 * lines (one per numeric column, or one per value of a category), a category with numbers bars
 * (stacked by a second category), two numbers a scatter plot, one row key-figure cards, anything
 * else the table alone. The caller may ask for a chart instead (`chart: {type, x, y, series}`);
 * one that cannot be drawn is refused naming the columns there are. Pure, no DOM: the tool, the
 * page and the CLI's report all choose with it, so the text and the chart agree.
 */

export const CHART_TYPES = ["line", "bar", "scatter", "kpi", "table"] as const;
export type ChartType = (typeof CHART_TYPES)[number];

export interface AnswerColumn {
  name: string;
  /** DuckDB's type name: VARCHAR, BIGINT, TIMESTAMP, DECIMAL(18,3), ... */
  type: string;
}

/**
 * What a column can be on a chart. time: dates and times (also text written as ISO dates);
 * ordinal: an integer part of a time (hour, day, month...), placed along x in order; number: a
 * measure; category: text, booleans and integer keys (IDs, codes); other: lists, JSON, intervals.
 */
export type ColumnKind = "time" | "ordinal" | "number" | "category" | "other";

export interface ChartRequest {
  type: ChartType;
  x?: string | undefined;
  y?: string[] | undefined;
  series?: string | undefined;
}

export type ChoiceReason =
  | "asked"
  | "no_rows"
  | "no_numbers"
  | "one_row"
  | "time"
  | "time_by_category"
  | "category"
  | "two_categories"
  | "two_categories_grouped"
  | "two_numbers"
  | "no_shape";

export interface ChartSpec {
  type: ChartType;
  x: string | null;
  y: string[];
  series: string | null;
  /** A bar chart with a series: its bars on top of each other; side by side when a value is negative. */
  stacked: boolean;
  reason: ChoiceReason;
}

/** A chart that cannot be drawn from this answer: says why and which columns there are. */
export class ChartChoiceError extends Error {
  override name = "ChartChoiceError";
}

/** Most measures drawn at once when the shape chooses them (lines or grouped bars). */
export const MAX_AUTO_Y = 10;

const INTEGER_TYPE = /^U?(TINYINT|SMALLINT|INTEGER|INT|BIGINT|HUGEINT)$/i;
const FRACTION_TYPE = /^(FLOAT|DOUBLE|REAL|DECIMAL(\(\d+,\s*\d+\))?|NUMERIC(\(\d+,\s*\d+\))?)$/i;
const TIME_TYPE = /^(DATE|TIMESTAMP(_S|_MS|_NS)?( WITH TIME ZONE)?|TIMESTAMPTZ|DATETIME)$/i;
const CATEGORY_TYPE = /^(VARCHAR|TEXT|STRING|BOOLEAN|UUID|TIME|ENUM\(.*\))$/i;
/** Integer columns named as a part of a time: hour(captured_at) AS hour, month, dow... */
const ORDINAL_NAME = /(^|_)(year|quarter|month|week|day|dow|weekday|hour|minute)s?$/i;
/** Integer columns that name things rather than count them: task number, error code, rank. */
const KEY_NAME = /(^|_)(id|number|no|code|rank)$|^#$/i;
/** `2025-03`, `2025-03-01`, `2025-03-01 10:00:00`, with an optional offset (`+09`, `Z`). */
const TIME_TEXT =
  /^(\d{4})-(\d{2})(?:-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?)?(?:\s*([+-])(\d{2})(?::?(\d{2}))?|Z)?$/;

export function isIntegerType(type: string): boolean {
  return INTEGER_TYPE.test(type.trim());
}

export function isNumericType(type: string): boolean {
  return INTEGER_TYPE.test(type.trim()) || FRACTION_TYPE.test(type.trim());
}

/**
 * A time value's place on a time axis: seconds since 1970 reading the wall time as UTC (an
 * export's times carry no zone); one with an offset is moved by it. Undefined for other values.
 */
export function timePosition(value: unknown): number | undefined {
  if (typeof value !== "string") return undefined;
  const m = TIME_TEXT.exec(value.trim());
  if (m === null) return undefined;
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((p) => Number(p ?? 0));
  const ms = Date.UTC(y ?? 0, (mo ?? 1) - 1, d || 1, h, mi, s);
  if (Number.isNaN(ms) || (mo ?? 0) < 1 || (mo ?? 0) > 12) return undefined;
  const offset = m[7] === undefined ? 0 : (Number(m[8]) * 60 + Number(m[9] ?? 0)) * 60;
  return ms / 1000 - (m[7] === "-" ? -offset : offset);
}

/** A cell as a number: numbers, and integers too large for a double written as text. */
export function cellNumber(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "string" && /^-?\d+(\.\d+)?$/.test(value.trim())) {
    const n = Number(value);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

export function columnKind(column: AnswerColumn, values: readonly unknown[]): ColumnKind {
  const type = column.type.trim();
  if (TIME_TYPE.test(type)) return "time";
  if (INTEGER_TYPE.test(type)) {
    if (ORDINAL_NAME.test(column.name)) return "ordinal";
    return KEY_NAME.test(column.name) ? "category" : "number";
  }
  if (FRACTION_TYPE.test(type)) return "number";
  if (/^VARCHAR$/i.test(type)) {
    const present = values.filter((v) => v !== null && v !== undefined);
    if (present.length > 0 && present.every((v) => timePosition(v) !== undefined)) return "time";
  }
  return CATEGORY_TYPE.test(type) ? "category" : "other";
}

/** The kind of every column, read from its type, its name and its values. */
export function columnKinds(
  columns: readonly AnswerColumn[],
  rows: readonly (readonly unknown[])[],
): ColumnKind[] {
  return columns.map((c, i) =>
    columnKind(
      c,
      rows.map((r) => r[i]),
    ),
  );
}

const NUMERIC_KINDS: ReadonlySet<ColumnKind> = new Set(["number", "ordinal"]);
/** What may stand along x for each chart: scatter wants a continuous axis. */
const X_KINDS: Record<"line" | "bar" | "scatter", ReadonlySet<ColumnKind>> = {
  line: new Set(["time", "ordinal", "number", "category"]),
  bar: new Set(["time", "ordinal", "number", "category"]),
  scatter: new Set(["time", "ordinal", "number"]),
};

/**
 * The chart of an answer: the one asked for (checked against the columns), or the one its shape
 * calls for. Throws ChartChoiceError for a request that names a column the answer lacks or puts
 * a column where its type cannot stand.
 */
export function chooseChart(
  columns: readonly AnswerColumn[],
  rows: readonly (readonly unknown[])[],
  request?: ChartRequest,
): ChartSpec {
  const kinds = columnKinds(columns, rows);
  return request === undefined
    ? byShape(columns, rows, kinds)
    : asked(columns, rows, kinds, request);
}

function spec(
  type: ChartType,
  reason: ChoiceReason,
  parts: { x?: string; y?: string[]; series?: string; stacked?: boolean } = {},
): ChartSpec {
  return {
    type,
    x: parts.x ?? null,
    y: parts.y ?? [],
    series: parts.series ?? null,
    stacked: parts.stacked ?? false,
    reason,
  };
}

function byShape(
  columns: readonly AnswerColumn[],
  rows: readonly (readonly unknown[])[],
  kinds: ColumnKind[],
): ChartSpec {
  const named = (kind: ColumnKind) =>
    columns.filter((_, i) => kinds[i] === kind).map((c) => c.name);
  const measures = named("number");
  if (rows.length === 0) return spec("table", "no_rows");
  if (measures.length === 0) return spec("table", "no_numbers");
  if (rows.length === 1) return spec("kpi", "one_row", { y: measures });
  const times = [...named("time"), ...named("ordinal")];
  const categories = named("category");
  const y = measures.slice(0, MAX_AUTO_Y);
  const [time] = times;
  const [category, second] = categories;
  if (time !== undefined) {
    return category === undefined
      ? spec("line", "time", { x: time, y })
      : spec("line", "time_by_category", { x: time, y: y.slice(0, 1), series: category });
  }
  if (category !== undefined) {
    if (second === undefined) return spec("bar", "category", { x: category, y });
    const stacked = !hasNegative(columns, rows, y[0]);
    return spec("bar", stacked ? "two_categories" : "two_categories_grouped", {
      x: category,
      y: y.slice(0, 1),
      series: second,
      stacked,
    });
  }
  if (measures.length >= 2) {
    return spec("scatter", "two_numbers", { x: measures[0], y: measures.slice(1, 2) });
  }
  return spec("table", "no_shape");
}

function hasNegative(
  columns: readonly AnswerColumn[],
  rows: readonly (readonly unknown[])[],
  name: string | undefined,
): boolean {
  const i = columns.findIndex((c) => c.name === name);
  return rows.some((r) => (cellNumber(r[i]) ?? 0) < 0);
}

/** The columns as an error lists them: `channel VARCHAR, n BIGINT`. */
function listed(columns: readonly AnswerColumn[]): string {
  return columns.length === 0 ? "(none)" : columns.map((c) => `${c.name} ${c.type}`).join(", ");
}

function asked(
  columns: readonly AnswerColumn[],
  rows: readonly (readonly unknown[])[],
  kinds: ColumnKind[],
  request: ChartRequest,
): ChartSpec {
  const all = `The answer's columns: ${listed(columns)}.`;
  const index = (name: string, field: string) => {
    const i = columns.findIndex((c) => c.name === name);
    if (i < 0) {
      throw new ChartChoiceError(`chart.${field} "${name}" is not a column of the answer. ${all}`);
    }
    return i;
  };
  const kindOf = (name: string, field: string) => kinds[index(name, field)] as ColumnKind;
  const type = request.type;
  if (!(CHART_TYPES as readonly string[]).includes(type)) {
    throw new ChartChoiceError(
      `chart.type "${type}" is not a chart; use one of ${CHART_TYPES.join(", ")}.`,
    );
  }
  // Every named column must exist, whatever the type makes of it.
  if (request.x !== undefined) index(request.x, "x");
  if (request.series !== undefined) index(request.series, "series");
  for (const name of request.y ?? []) index(name, "y");
  if (type === "table") return spec("table", "asked");

  const numeric = columns.filter((_, i) => NUMERIC_KINDS.has(kinds[i] as ColumnKind));
  const numericList = `Numeric columns: ${listed(numeric)}.`;
  for (const name of request.y ?? []) {
    if (!NUMERIC_KINDS.has(kindOf(name, "y"))) {
      const column = columns[index(name, "y")] as AnswerColumn;
      throw new ChartChoiceError(
        `chart.y "${name}" is ${column.type}, not a number: y takes numeric columns. ${numericList}`,
      );
    }
  }
  if (type === "kpi") {
    if (rows.length > 1) {
      throw new ChartChoiceError(
        `chart.type "kpi" draws an answer of one row; this one has ${rows.length}. Use "bar", "line" or "table", or aggregate to one row.`,
      );
    }
    const y = request.y ?? columns.filter((_, i) => kinds[i] === "number").map((c) => c.name);
    return spec("kpi", "asked", { y });
  }

  const fits = X_KINDS[type];
  const x = request.x ?? defaultX(type, columns, kinds, request);
  if (x === undefined) {
    throw new ChartChoiceError(
      `chart.type "${type}" needs an x column (${[...fits].join(", ")}); name one in chart.x. ${all}`,
    );
  }
  const xKind = kindOf(x, "x");
  if (!fits.has(xKind)) {
    const column = columns[index(x, "x")] as AnswerColumn;
    const usable = columns.filter((_, i) => fits.has(kinds[i] as ColumnKind));
    throw new ChartChoiceError(
      `chart.x "${x}" is ${column.type}, which a ${type} chart cannot place along x. Columns it can: ${listed(usable)}.`,
    );
  }
  const series = request.series;
  if (series !== undefined) {
    if (kindOf(series, "series") === "other") {
      const column = columns[index(series, "series")] as AnswerColumn;
      throw new ChartChoiceError(
        `chart.series "${series}" is ${column.type}: a series takes a text, date or number column. ${all}`,
      );
    }
    if (series === x) {
      throw new ChartChoiceError(`chart.series "${series}" is also chart.x; give another column.`);
    }
  }
  const taken = new Set([x, series]);
  const y =
    request.y ??
    numeric
      .map((c) => c.name)
      .filter((name) => !taken.has(name))
      .slice(0, series === undefined ? MAX_AUTO_Y : 1);
  if (y.length === 0) {
    throw new ChartChoiceError(
      `chart.type "${type}" needs a numeric column for y besides x and series. ${numericList}`,
    );
  }
  if (y.includes(x)) throw new ChartChoiceError(`chart.y names "${x}", which is chart.x.`);
  const stacked = type === "bar" && series !== undefined && !hasNegative(columns, rows, y[0]);
  return spec(type, "asked", {
    x,
    y,
    ...(series === undefined ? {} : { series }),
    stacked,
  });
}

/** The x a requested chart takes when none is named. */
function defaultX(
  type: "line" | "bar" | "scatter",
  columns: readonly AnswerColumn[],
  kinds: ColumnKind[],
  request: ChartRequest,
): string | undefined {
  const taken = new Set([request.series, ...(request.y ?? [])]);
  const order: Record<typeof type, ColumnKind[]> = {
    line: ["time", "ordinal", "category"],
    bar: ["category", "time", "ordinal"],
    scatter: ["number", "ordinal", "time"],
  };
  for (const kind of order[type]) {
    const found = columns.find((c, i) => kinds[i] === kind && !taken.has(c.name));
    if (found !== undefined) return found.name;
  }
  return undefined;
}
