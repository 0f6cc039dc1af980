import { CAMPAIGN_CSV_COLUMNS } from "../../api/csv-columns.js";
import { type CsvRecord, fieldText } from "../csv/scanner.js";
import { AnalysisError } from "../errors.js";
import { isLocalTime } from "./local-time.js";

/** The campaign CSV's columns (spec 2.4) and the checks on their shapes. */

export const COL = {
  task: 0,
  scheduled: 1,
  group: 2,
  event: 3,
  user: 4,
  platformUser: 5,
  captured: 6,
  channel: 7,
  errorCode: 8,
  errorMessage: 9,
  properties: 10,
  customProperties: 11,
} as const;
export const COLUMN_COUNT = CAMPAIGN_CSV_COLUMNS.length;
export const CONTROL_GROUP = "대조군";
/** Longest task_id, group, event_type, channel or error_code accepted (see badField). */
export const MAX_KEY_BYTES = 256;

/**
 * Field shapes are checked before a field is interned or used as a key, each where it is first
 * decoded (rows that repeat the previous row's key bytes were checked with that row): very long
 * keys would make every lookup slow (V8 hashes strings over 16,383 characters by length only) and
 * the result and its text unbounded.
 */
export function badField(rec: CsvRecord, problem: string): AnalysisError {
  return new AnalysisError(
    `Not a campaign export: line ${rec.line}: ${problem}, which a campaign export from the service never has. Check that the file is an unedited campaign_event_data export.`,
    "not_campaign_export",
  );
}

export function checkKeyLength(rec: CsvRecord, col: number, name: string): void {
  if ((rec.ends[col] as number) - (rec.starts[col] as number) > MAX_KEY_BYTES) {
    throw badField(rec, `${name} is longer than ${MAX_KEY_BYTES} bytes`);
  }
}

export function checkTimeShape(rec: CsvRecord, col: number, name: string): void {
  const s = rec.starts[col] as number;
  const b = rec.buf;
  if (
    (rec.ends[col] as number) - s !== 19 ||
    b[s + 4] !== 0x2d ||
    b[s + 7] !== 0x2d ||
    b[s + 10] !== 0x20 ||
    b[s + 13] !== 0x3a ||
    b[s + 16] !== 0x3a
  ) {
    throw badField(rec, `${name} is not a YYYY-MM-DD HH:mm:ss time`);
  }
}

export function checkTime(rec: CsvRecord, col: number, name: string): void {
  if (!isLocalTime(rec.buf, rec.starts[col] as number, rec.ends[col] as number)) {
    throw badField(rec, `${name} is not a YYYY-MM-DD HH:mm:ss time`);
  }
}

export function headerMatches(rec: CsvRecord): boolean {
  if (rec.count !== COLUMN_COUNT) return false;
  for (let i = 0; i < COLUMN_COUNT; i++) {
    let text = fieldText(rec, i);
    if (i === 0 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text !== CAMPAIGN_CSV_COLUMNS[i]) return false;
  }
  return true;
}

export function badColumnCount(
  bad: { line: number; count: number },
  atEnd: boolean,
): AnalysisError {
  const why = atEnd
    ? " It is the last line and the file does not end with a line break: the file looks truncated (an interrupted download?). Download or export it again."
    : " A campaign export has exactly 13 columns on every row; the file was probably edited or damaged.";
  return new AnalysisError(
    `The campaign CSV is malformed: line ${bad.line} has ${bad.count} columns instead of ${COLUMN_COUNT}.${why}`,
    "malformed_csv",
  );
}
