import fc from "fast-check";
import { SaxesParser, type SaxesTagPlain } from "saxes";
import { describe, expect, it } from "vitest";
import { scanXml, XmlScanError } from "../../../src/analysis/scenario/xml-scan.js";

// The byte-level XML reader of worksheets against saxes (a strict, conforming parser) as the
// oracle: the same elements, attributes and text on generated documents, and the same refusals.

type Event = string;

function withSaxes(xml: string): Event[] {
  const events: Event[] = [];
  const parser = new SaxesParser({ xmlns: false });
  const local = (name: string) => name.slice(name.indexOf(":") + 1);
  parser.on("error", (error) => {
    throw error;
  });
  parser.on("opentag", (tag: SaxesTagPlain) =>
    events.push(`open ${local(tag.name)} ${JSON.stringify(tag.attributes)}`),
  );
  parser.on("closetag", (tag: SaxesTagPlain) => events.push(`close ${local(tag.name)}`));
  parser.on("text", (text) => events.push(`text ${text}`));
  parser.on("cdata", (text) => events.push(`text ${text}`));
  parser.write(xml).close();
  return joinTexts(events);
}

function withScan(xml: string): Event[] {
  const events: Event[] = [];
  scanXml(Buffer.from(xml, "utf8"), {
    open: (name, attributes) => events.push(`open ${name} ${JSON.stringify(attributes)}`),
    close: (name) => events.push(`close ${name}`),
    text: (text) => events.push(`text ${text}`),
  });
  return joinTexts(events);
}

/** Adjacent text pieces as one; whitespace-only text left out (saxes skips it outside the root). */
function joinTexts(events: Event[]): Event[] {
  const out: Event[] = [];
  for (const e of events) {
    const last = out.at(-1);
    if (e.startsWith("text ") && last?.startsWith("text ")) out[out.length - 1] = last + e.slice(5);
    else out.push(e);
  }
  return out.filter((e) => !/^text \s*$/.test(e));
}

const escapeXml = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
const nameArb = fc.constantFrom("c", "row", "v", "t", "is", "sheetData", "x:row", "x:c", "요소");
const textArb = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 12 }).map(escapeXml),
  fc.constantFrom(
    "&#65;",
    "&#x1F600;",
    "&quot;",
    "&apos;",
    " ",
    "\n",
    "<![CDATA[a<b&c]]>",
    "<!-- note -->",
    "<?pi x?>",
  ),
);
const attrsArb = fc.uniqueArray(
  fc.tuple(
    fc.constantFrom("r", "s", "t", "x:id", "name"),
    fc.string({ unit: "grapheme", maxLength: 8 }),
  ),
  { selector: ([k]) => k, maxLength: 3 },
);

const elementArb: fc.Memo<string> = fc.memo((depth) =>
  fc
    .tuple(
      nameArb,
      attrsArb,
      fc.array(depth > 1 ? fc.oneof(textArb, elementArb(depth - 1)) : textArb, { maxLength: 4 }),
      fc.boolean(),
    )
    .map(([name, attrs, children, quote]) => {
      const q = quote ? '"' : "'";
      const attributes = attrs
        .map(
          ([k, v]) =>
            ` ${k}=${q}${escapeXml(v).replaceAll(q, q === '"' ? "&quot;" : "&apos;")}${q}`,
        )
        .join("");
      return children.length === 0
        ? `<${name}${attributes}/>`
        : `<${name}${attributes}>${children.join("")}</${name}>`;
    }),
);

describe("scanXml", () => {
  it("reads generated documents as saxes does", () => {
    fc.assert(
      fc.property(elementArb(4), fc.boolean(), (root, declaration) => {
        const xml = `${declaration ? '<?xml version="1.0" encoding="UTF-8"?>\n' : ""}${root}\n`;
        expect(withScan(xml)).toEqual(withSaxes(xml));
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    ["<a><b></a></b>", "mismatched end tag"],
    ["<a>", "element never closed"],
    ["<a b=c/>", "unquoted attribute"],
    ['<a b="<"/>', "< in an attribute"],
    ["<a>&bogus;</a>", "unknown reference"],
    ["<a>& b</a>", "bare ampersand"],
    ["<a/><b/>", "two roots"],
    ["x<a/>", "text outside the root"],
    ["<a><!-- open</a>", "comment never closed"],
    ['<a b="1" b="2"/>', "attribute twice"],
    ["", "no root"],
  ])("refuses %s (%s), as saxes does", (xml) => {
    expect(() => withSaxes(xml)).toThrow();
    expect(() => withScan(xml)).toThrow(XmlScanError);
  });

  it("refuses a document type declaration, which saxes reads (a workbook part has none)", () => {
    const xml = '<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>';
    expect(() => withScan(xml)).toThrow(/document type declaration/);
  });
});
