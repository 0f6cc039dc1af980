/**
 * A strict XML reader over the bytes of a workbook part, for the worksheets, which are most of a
 * scenario export (a year of days on 60 nodes is 10 MB of XML). saxes, kept for the small parts,
 * builds strings and objects for every character and tag; this one walks the UTF-8 bytes and
 * makes strings only of names, attribute values and text (what it saves: bench/RESULTS.md,
 * "What the performance code is worth"). It checks what
 * well-formed XML requires of a part: one root element, start and end tags that match, quoted
 * attribute values without `<`, known or numeric character references, closed comments, CDATA
 * sections and processing instructions. A document type declaration is refused (a workbook part
 * has none, and it is how entity expansion attacks start). Anything else throws XmlScanError
 * with the byte offset.
 */

export class XmlScanError extends Error {
  override name = "XmlScanError";
}

export interface XmlHandlers {
  /** A start tag (also of an empty element, which is then closed at once), prefix removed. */
  open(name: string, attributes: Record<string, string>): void;
  close(name: string): void;
  /** Character data (references resolved; CDATA as written), possibly in several pieces. */
  text(text: string): void;
}

const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const QUESTION = 0x3f;
const BANG = 0x21;
const EQUALS = 0x3d;
const QUOTE = 0x22;
const APOS = 0x27;

const isSpace = (b: number): boolean => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;
/** Bytes that end a name: space, `/`, `=`, `>`, and the characters XML never allows in one. */
const endsName = (b: number): boolean =>
  isSpace(b) || b === SLASH || b === EQUALS || b === GT || b === LT || b === QUOTE || b === APOS;

const ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

/** True when the ASCII `text` is at `at`. */
function startsWith(buf: Buffer, at: number, text: string): boolean {
  for (let k = 0; k < text.length; k++) if (buf[at + k] !== text.charCodeAt(k)) return false;
  return true;
}

function fail(message: string, at: number): never {
  throw new XmlScanError(`${message} at byte ${at}`);
}

/** Text with its references resolved. */
function decodeText(buf: Buffer, start: number, end: number): string {
  const raw = buf.toString("utf8", start, end);
  if (raw.indexOf("&") < 0) return raw;
  return raw.replace(/&([^;&<]*);|&/g, (match, ref: string | undefined, offset: number) => {
    if (ref === undefined) return fail("'&' that starts no reference", start + offset);
    const named = ENTITIES[ref];
    if (named !== undefined) return named;
    const code = /^#x[0-9a-fA-F]+$/.test(ref)
      ? Number.parseInt(ref.slice(2), 16)
      : /^#[0-9]+$/.test(ref)
        ? Number(ref.slice(1))
        : Number.NaN;
    if (!Number.isInteger(code) || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
      return fail(`unknown reference ${JSON.stringify(match.slice(0, 20))}`, start + offset);
    }
    return String.fromCodePoint(code);
  });
}

/**
 * Text: ASCII without references (nearly every value in a worksheet: numbers, cell references)
 * is read as latin1, which skips UTF-8 decoding.
 */
function textOf(buf: Buffer, start: number, end: number): string {
  for (let k = start; k < end; k++) {
    const b = buf[k] as number;
    if (b >= 0x80 || b === 0x26) return decodeText(buf, start, end);
  }
  return buf.toString("latin1", start, end);
}

interface Name {
  bytes: Uint8Array;
  full: string;
  local: string;
}

/** Names seen, in a direct-mapped cache by length and end bytes: a part uses a handful. */
const NAME_SLOTS = 1024;
const names: (Name | undefined)[] = new Array<Name | undefined>(NAME_SLOTS).fill(undefined);

/** The name in bytes `[start, end)`, and without its prefix. */
function nameOf(buf: Buffer, start: number, end: number): Name {
  if (end === start) fail("a tag or attribute without a name", start);
  const length = end - start;
  const slot =
    (length * 31 + (buf[start] as number) * 7 + (buf[end - 1] as number)) & (NAME_SLOTS - 1);
  const known = names[slot];
  if (known !== undefined && known.bytes.length === length) {
    let k = 0;
    while (k < length && known.bytes[k] === buf[start + k]) k++;
    if (k === length) return known;
  }
  let from = start;
  for (let i = start; i < end; i++) if (buf[i] === 0x3a) from = i + 1;
  const name = {
    bytes: new Uint8Array(buf.subarray(start, end)),
    full: buf.toString("utf8", start, end),
    local: buf.toString("utf8", from, end),
  };
  names[slot] = name;
  return name;
}

/** Reads a whole part; the caller has checked that it is UTF-8. */
export function scanXml(buf: Buffer, handlers: XmlHandlers): void {
  const len = buf.length;
  const stack: string[] = [];
  let roots = 0;
  let i = buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
  while (i < len) {
    // A loop, not indexOf: the text between two tags is mostly empty or a short value, and a
    // native call per tag cost more than the bytes.
    let lt = i;
    while (lt < len && buf[lt] !== LT) lt++;
    if (lt === len) lt = -1;
    const textEnd = lt < 0 ? len : lt;
    if (textEnd > i) {
      if (stack.length > 0) handlers.text(textOf(buf, i, textEnd));
      else {
        for (let k = i; k < textEnd; k++) {
          if (!isSpace(buf[k] as number)) fail("text outside the root element", k);
        }
      }
    }
    if (lt < 0) break;
    i = lt + 1;
    const b = buf[i];
    if (b === SLASH) {
      let e = i + 1;
      while (e < len && !endsName(buf[e] as number)) e++;
      const { local: name, full } = nameOf(buf, i + 1, e);
      while (e < len && isSpace(buf[e] as number)) e++;
      if (buf[e] !== GT) fail("an end tag not closed by '>'", e);
      if (stack.pop() !== full) fail(`an end tag </${full.slice(0, 40)}> that closes nothing`, i);
      handlers.close(name);
      i = e + 1;
    } else if (b === QUESTION) {
      const end = buf.indexOf("?>", i + 1);
      if (end < 0) fail("a processing instruction never closed", i);
      i = end + 2;
    } else if (b === BANG) {
      if (startsWith(buf, i, "!--")) {
        const end = buf.indexOf("-->", i + 3);
        if (end < 0) fail("a comment never closed", i);
        i = end + 3;
      } else if (startsWith(buf, i, "![CDATA[")) {
        const end = buf.indexOf("]]>", i + 8);
        if (end < 0 || stack.length === 0) fail("a CDATA section never closed or outside", i);
        handlers.text(buf.toString("utf8", i + 8, end));
        i = end + 3;
      } else {
        fail("a document type declaration or unknown markup", i);
      }
    } else {
      if (stack.length === 0 && roots > 0) fail("more than one root element", i);
      if (stack.length === 0) roots++;
      i = startTag(buf, i, stack, handlers);
    }
  }
  if (stack.length > 0) fail(`element <${stack.at(-1)?.slice(0, 40)}> never closed`, len);
  if (roots === 0) fail("no root element", len);
}

/** A start tag from its name at `i`; returns the offset after its `>`. */
function startTag(buf: Buffer, at: number, stack: string[], handlers: XmlHandlers): number {
  const len = buf.length;
  let i = at;
  while (i < len && !endsName(buf[i] as number)) i++;
  const { full, local: name } = nameOf(buf, at, i);
  const attributes: Record<string, string> = {};
  for (;;) {
    const before = i;
    while (i < len && isSpace(buf[i] as number)) i++;
    const b = buf[i];
    if (b === GT) {
      stack.push(full);
      handlers.open(name, attributes);
      return i + 1;
    }
    if (b === SLASH) {
      if (buf[i + 1] !== GT) fail("'/' not followed by '>' in a tag", i);
      handlers.open(name, attributes);
      handlers.close(name);
      return i + 2;
    }
    if (i >= len) fail(`tag <${full.slice(0, 40)}> never closed`, at);
    if (i === before) fail("attributes not separated by space", i);
    const nameStart = i;
    while (i < len && !endsName(buf[i] as number)) i++;
    const attr = nameOf(buf, nameStart, i).full;
    while (i < len && isSpace(buf[i] as number)) i++;
    if (buf[i] !== EQUALS) fail(`attribute ${attr.slice(0, 40)} without a value`, i);
    i++;
    while (i < len && isSpace(buf[i] as number)) i++;
    const quote = buf[i];
    if (quote !== QUOTE && quote !== APOS) fail("an attribute value not in quotes", i);
    let end = i + 1;
    while (end < len && buf[end] !== quote) {
      if (buf[end] === LT) fail("'<' in an attribute value", end);
      end++;
    }
    if (end >= len) fail("an attribute value never closed", i);
    if (Object.hasOwn(attributes, attr)) fail(`attribute ${attr.slice(0, 40)} given twice`, i);
    const value = textOf(buf, i + 1, end);
    // Line breaks and tabs in attribute values read as spaces (XML 1.0, 3.3.3).
    attributes[attr] = /[\t\n\r]/.test(value) ? value.replace(/\r\n|[\t\n\r]/g, " ") : value;
    i = end + 1;
  }
}
