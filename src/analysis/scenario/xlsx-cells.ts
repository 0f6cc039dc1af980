import { StringDecoder } from "node:string_decoder";
import { SaxesParser, type SaxesTagPlain } from "saxes";
import { scanXml, type XmlHandlers, XmlScanError } from "./xml-scan.js";

/**
 * The cell values of an .xlsx workbook, read from the parts zip-guard inflated and counted (the
 * file itself is never read here). Only what a summary needs: each sheet's name, in workbook
 * order, and the values of its cells; styles only to tell a date from a number. The XML is read
 * by saxes (a strict, streaming, well-formedness-checking parser), never by pattern matching.
 */

/** A cell as the summary sees it: text, number, boolean, a date (a date-formatted number), or none. */
export type CellValue = string | number | boolean | Date | null;

export interface SheetRows {
  name: string;
  /** The rows that hold at least one value, in row order; `r` is the 1-based row number. */
  rows: { r: number; cells: CellValue[] }[];
}

export interface ReadLimits {
  maxRows: number;
  maxColumns: number;
  /** The error to throw when a sheet is larger (the caller words it). */
  tooBig: (sheet: string, what: string) => Error;
}

/** A part that is missing or not well-formed XML: the caller reports an unreadable workbook. */
export class WorkbookFormatError extends Error {
  override name = "WorkbookFormatError";
}

const MAIN_NS_PREFIX_FREE = (name: string) => name.slice(name.indexOf(":") + 1);

/**
 * Characters handed to the parser at a time: a part decoded into one string of more than about
 * 128 KB lands in V8's large-object space, which costs more than the decoding itself (a year of
 * days is about 180 KB of XML).
 */
const DECODE_BYTES = 1 << 15;

function parseXml(
  xml: Buffer,
  handlers: {
    open?: (name: string, attributes: Record<string, string>) => void;
    close?: (name: string) => void;
    text?: (text: string) => void;
  },
): void {
  const parser = new SaxesParser({ xmlns: false });
  parser.on("error", (error) => {
    throw new WorkbookFormatError(`not well-formed XML: ${error.message}`);
  });
  if (handlers.open !== undefined) {
    const open = handlers.open;
    parser.on("opentag", (tag: SaxesTagPlain) =>
      open(MAIN_NS_PREFIX_FREE(tag.name), tag.attributes as Record<string, string>),
    );
  }
  if (handlers.close !== undefined) {
    const close = handlers.close;
    parser.on("closetag", (tag: SaxesTagPlain) => close(MAIN_NS_PREFIX_FREE(tag.name)));
  }
  if (handlers.text !== undefined) {
    parser.on("text", handlers.text);
    parser.on("cdata", handlers.text);
  }
  // Decoded piece by piece; the decoder keeps a character cut between two pieces whole.
  const decoder = new StringDecoder("utf8");
  for (let at = 0; at < xml.length; at += DECODE_BYTES) {
    parser.write(decoder.write(xml.subarray(at, at + DECODE_BYTES)));
  }
  parser.write(decoder.end()).close();
}

/** A worksheet, the bulk of a workbook, through the faster byte-level reader (xml-scan.ts). */
function scanPart(xml: Buffer, handlers: XmlHandlers): void {
  try {
    scanXml(xml, handlers);
  } catch (error) {
    if (error instanceof XmlScanError) {
      throw new WorkbookFormatError(`not well-formed XML: ${error.message}`);
    }
    throw error;
  }
}

function partText(parts: ReadonlyMap<string, Buffer>, name: string): Buffer | undefined {
  return parts.get(name);
}

/** Sheet names and their part names, in the workbook's order. */
function sheetParts(parts: ReadonlyMap<string, Buffer>): Array<{ name: string; part: string }> {
  const workbook = partText(parts, "xl/workbook.xml");
  if (workbook === undefined) throw new WorkbookFormatError("no xl/workbook.xml");
  const targets = new Map<string, string>();
  const rels = partText(parts, "xl/_rels/workbook.xml.rels");
  if (rels !== undefined) {
    parseXml(rels, {
      open(name, a) {
        if (name === "Relationship" && a.Id !== undefined && a.Target !== undefined) {
          targets.set(a.Id, a.Target);
        }
      },
    });
  }
  const sheets: Array<{ name: string; part: string }> = [];
  parseXml(workbook, {
    open(name, a) {
      if (name !== "sheet") return;
      const id = a["r:id"] ?? Object.entries(a).find(([k]) => k.endsWith(":id"))?.[1];
      const target = id === undefined ? undefined : targets.get(id);
      // Targets are relative to xl/ unless absolute (some writers use /xl/worksheets/...).
      const part =
        target === undefined
          ? `xl/worksheets/sheet${sheets.length + 1}.xml`
          : target.startsWith("/")
            ? target.slice(1)
            : `xl/${target}`;
      sheets.push({ name: a.name ?? `Sheet${sheets.length + 1}`, part });
    },
  });
  return sheets;
}

/** Shared strings: each `<si>`'s text, rich-text runs joined, phonetic runs (`<rPh>`) left out. */
function sharedStrings(parts: ReadonlyMap<string, Buffer>): string[] {
  const xml = partText(parts, "xl/sharedStrings.xml");
  if (xml === undefined) return [];
  const strings: string[] = [];
  let current: string[] | undefined;
  let inText = false;
  let inPhonetic = 0;
  parseXml(xml, {
    open(name) {
      if (name === "si") current = [];
      else if (name === "rPh") inPhonetic += 1;
      else if (name === "t" && inPhonetic === 0) inText = true;
    },
    close(name) {
      if (name === "si") {
        strings.push((current ?? []).join(""));
        current = undefined;
      } else if (name === "rPh") inPhonetic -= 1;
      else if (name === "t") inText = false;
    },
    text(text) {
      if (inText && current !== undefined) current.push(text);
    },
  });
  return strings;
}

/** Built-in number formats that show dates or times (ECMA-376 part 1, 18.8.30). */
const BUILTIN_DATE_FORMATS = new Set([
  14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 45, 46, 47, 50, 51,
  52, 53, 54, 55, 56, 57, 58,
]);

function isDateFormatCode(code: string): boolean {
  // Quoted text, escaped characters and [colour]/[condition] sections are not date parts.
  const bare = code.replace(/"[^"]*"|\\.|\[[^\]]*\]/g, "");
  return /[dmyhs]/i.test(bare) && !/^General$/i.test(bare);
}

/** For each cell style index (`s`), whether its number format is a date. */
function dateStyles(parts: ReadonlyMap<string, Buffer>): boolean[] {
  const xml = partText(parts, "xl/styles.xml");
  if (xml === undefined) return [];
  const custom = new Map<number, string>();
  const styles: boolean[] = [];
  let inCellXfs = false;
  parseXml(xml, {
    open(name, a) {
      if (name === "numFmt" && a.numFmtId !== undefined) {
        custom.set(Number(a.numFmtId), a.formatCode ?? "");
      } else if (name === "cellXfs") inCellXfs = true;
      else if (name === "xf" && inCellXfs) {
        const id = Number(a.numFmtId ?? 0);
        const code = custom.get(id);
        styles.push(code === undefined ? BUILTIN_DATE_FORMATS.has(id) : isDateFormatCode(code));
      }
    },
    close(name) {
      if (name === "cellXfs") inCellXfs = false;
    },
  });
  return styles;
}

function uses1904Dates(parts: ReadonlyMap<string, Buffer>): boolean {
  let date1904 = false;
  parseXml(partText(parts, "xl/workbook.xml") ?? Buffer.from("<workbook/>"), {
    open(name, a) {
      if (name === "workbookPr") date1904 = a.date1904 === "1" || a.date1904 === "true";
    },
  });
  return date1904;
}

const DAY_MS = 86_400_000;
const EPOCH_1900 = Date.UTC(1899, 11, 30);
const EPOCH_1904 = Date.UTC(1904, 0, 1);

/** "A1" -> 1, "AB7" -> 28; 0 when the reference has no column letters. */
function columnOf(ref: string): number {
  let column = 0;
  for (const ch of ref) {
    const code = ch.charCodeAt(0);
    if (code < 65 || code > 90) break;
    column = column * 26 + (code - 64);
  }
  return column;
}

/**
 * Every sheet's rows of values. Throws `limits.tooBig` for a sheet past the limits as soon as the
 * first row or value past them is seen, and WorkbookFormatError for a workbook it cannot read.
 */
export function readWorkbookRows(
  parts: ReadonlyMap<string, Buffer>,
  limits: ReadLimits,
): SheetRows[] {
  const strings = sharedStrings(parts);
  const dates = dateStyles(parts);
  const epoch = uses1904Dates(parts) ? EPOCH_1904 : EPOCH_1900;
  return sheetParts(parts).map(({ name, part }) => {
    const xml = partText(parts, part);
    if (xml === undefined) throw new WorkbookFormatError(`sheet part ${part} is missing`);
    const rows: SheetRows["rows"] = [];
    let rowNumber = 0;
    let cells: CellValue[] = [];
    let column = 0;
    let type = "n";
    let style = 0;
    let raw: string[] | undefined;
    let inValue = false;
    let inline: string[] | undefined;
    let inInlineText = false;
    const finishCell = () => {
      // An inline string's text is in <is>; a <v> holds every other kind of value.
      const text = inline !== undefined ? inline.join("") : raw?.join("");
      if (text === undefined) return;
      const value = cellValue(text, inline !== undefined ? "inlineStr" : type);
      if (value === null) return;
      if (column > limits.maxColumns) {
        throw limits.tooBig(name, `cells beyond column ${limits.maxColumns}`);
      }
      cells[column - 1] = value;
    };
    const cellValue = (text: string, t: string): CellValue => {
      switch (t) {
        case "s": {
          const s = strings[Number(text)];
          return s === undefined ? null : s;
        }
        case "str":
        case "inlineStr":
          return text;
        case "b":
          return text === "1" || text === "true";
        case "e":
          return null;
        case "d": {
          const at = Date.parse(text);
          return Number.isFinite(at) ? new Date(at) : text;
        }
        default: {
          const n = Number(text);
          if (text.trim() === "" || !Number.isFinite(n)) return null;
          return dates[style] === true ? new Date(epoch + Math.round(n * DAY_MS)) : n;
        }
      }
    };
    scanPart(xml, {
      open(tag, a) {
        switch (tag) {
          case "row":
            rowNumber = a.r === undefined ? rowNumber + 1 : Number(a.r);
            cells = [];
            column = 0;
            break;
          case "c":
            column = a.r === undefined ? column + 1 : columnOf(a.r) || column + 1;
            type = a.t ?? "n";
            style = Number(a.s ?? 0);
            raw = undefined;
            inline = undefined;
            break;
          case "v":
            raw = [];
            inValue = true;
            break;
          case "is":
            inline = [];
            break;
          case "t":
            if (inline !== undefined) inInlineText = true;
            break;
        }
      },
      close(tag) {
        switch (tag) {
          case "c":
            finishCell();
            raw = undefined;
            inline = undefined;
            break;
          case "t":
            inInlineText = false;
            break;
          case "v":
            inValue = false;
            break;
          case "row": {
            if (cells.length === 0) break;
            if (rows.length >= limits.maxRows) {
              throw limits.tooBig(name, `more than ${limits.maxRows} rows`);
            }
            for (let i = 0; i < cells.length; i++) if (cells[i] === undefined) cells[i] = null;
            rows.push({ r: rowNumber, cells });
            break;
          }
        }
      },
      text(text) {
        if (inValue && raw !== undefined) raw.push(text);
        else if (inInlineText && inline !== undefined) inline.push(text);
      },
    });
    return { name, rows };
  });
}
