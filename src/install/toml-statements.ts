/**
 * Just enough of TOML (1.0, and 1.1's newlines in inline tables) to find where each table
 * header and each key/value statement of a file starts and ends, with its full key path: the
 * values are skipped, never interpreted. `install codex` rewrites only the lines of its own
 * server's tables and keeps every other byte of the user's config.toml, so it needs positions,
 * not data. What it cannot read throws a TomlReadError naming the line.
 */

export interface TomlStatement {
  kind: "header" | "array-header" | "key";
  /** The full key path: a header's own, a key's prefixed by the table it is in. */
  path: string[];
  /** Offset of the statement's first character. */
  start: number;
  /** Offset just past its line ending (or the end of the text). */
  end: number;
}

export class TomlReadError extends Error {
  override name = "TomlReadError";
}

export function tomlStatements(text: string): TomlStatement[] {
  return new Scanner(text).statements();
}

const BARE_KEY = /[A-Za-z0-9_-]/;
const ESCAPES: Record<string, string> = {
  b: "\b",
  t: "\t",
  n: "\n",
  f: "\f",
  r: "\r",
  e: "\u001b",
  '"': '"',
  "\\": "\\",
};

class Scanner {
  private i = 0;

  constructor(private readonly text: string) {}

  statements(): TomlStatement[] {
    const found: TomlStatement[] = [];
    let table: string[] = [];
    for (;;) {
      this.skipBlankLines();
      if (this.i >= this.text.length) return found;
      const start = this.i;
      if (this.peek() === "[") {
        const array = this.text.startsWith("[[", this.i);
        this.i += array ? 2 : 1;
        const path = this.key();
        this.expect(array ? "]]" : "]");
        this.lineEnd();
        table = path;
        found.push({ kind: array ? "array-header" : "header", path, start, end: this.i });
      } else {
        const path = this.key();
        this.expect("=");
        this.value();
        this.lineEnd();
        found.push({ kind: "key", path: [...table, ...path], start, end: this.i });
      }
    }
  }

  private peek(offset = 0): string | undefined {
    return this.text[this.i + offset];
  }

  private fail(what: string): never {
    const line = this.text.slice(0, this.i).split("\n").length;
    throw new TomlReadError(`line ${line}: ${what}`);
  }

  private skipSpaces(): void {
    while (this.peek() === " " || this.peek() === "\t") this.i++;
  }

  /** Spaces, newlines and comments, as between statements and between array items. */
  private skipBlankLines(): void {
    for (;;) {
      const c = this.peek();
      if (c === " " || c === "\t" || c === "\n" || c === "\r") this.i++;
      else if (c === "#") this.skipComment();
      else return;
    }
  }

  private skipComment(): void {
    while (this.i < this.text.length && this.peek() !== "\n") this.i++;
  }

  private expect(token: string): void {
    this.skipSpaces();
    if (!this.text.startsWith(token, this.i)) this.fail(`expected "${token}"`);
    this.i += token.length;
  }

  /** Spaces and a comment, then a newline (consumed) or the end of the text. */
  private lineEnd(): void {
    this.skipSpaces();
    if (this.peek() === "#") this.skipComment();
    if (this.peek() === "\r" && this.peek(1) === "\n") this.i += 2;
    else if (this.peek() === "\n") this.i++;
    else if (this.i < this.text.length) this.fail("expected the end of the line");
  }

  /** A dotted key: bare, "basic" or 'literal' parts. */
  private key(): string[] {
    const parts: string[] = [];
    for (;;) {
      this.skipSpaces();
      const c = this.peek();
      if (c === '"') parts.push(this.basicString());
      else if (c === "'") parts.push(this.literalString());
      else {
        const from = this.i;
        while (BARE_KEY.test(this.peek() ?? "")) this.i++;
        if (this.i === from) this.fail("expected a key");
        parts.push(this.text.slice(from, this.i));
      }
      this.skipSpaces();
      if (this.peek() !== ".") return parts;
      this.i++;
    }
  }

  private value(): void {
    this.skipSpaces();
    const c = this.peek();
    if (this.text.startsWith('"""', this.i)) this.multiLineString('"""');
    else if (this.text.startsWith("'''", this.i)) this.multiLineString("'''");
    else if (c === '"') this.basicString();
    else if (c === "'") this.literalString();
    else if (c === "[") this.array();
    else if (c === "{") this.inlineTable();
    else this.scalar();
  }

  private basicString(): string {
    this.i++;
    let out = "";
    for (;;) {
      const c = this.peek();
      if (c === undefined || c === "\n") this.fail("a string is not closed on its line");
      this.i++;
      if (c === '"') return out;
      if (c !== "\\") {
        out += c;
        continue;
      }
      const e = this.peek() ?? "";
      this.i++;
      if (e in ESCAPES) out += ESCAPES[e];
      else if (e === "u" || e === "U" || e === "x") {
        const digits = e === "u" ? 4 : e === "U" ? 8 : 2;
        const hex = this.text.slice(this.i, this.i + digits);
        if (!/^[0-9A-Fa-f]+$/.test(hex) || hex.length !== digits) this.fail("a bad escape");
        out += String.fromCodePoint(Number.parseInt(hex, 16));
        this.i += digits;
      } else this.fail("a bad escape");
    }
  }

  private literalString(): string {
    const from = ++this.i;
    const close = this.text.indexOf("'", from);
    const newline = this.text.indexOf("\n", from);
    if (close < 0 || (newline >= 0 && newline < close)) {
      this.fail("a string is not closed on its line");
    }
    this.i = close + 1;
    return this.text.slice(from, close);
  }

  private multiLineString(quotes: '"""' | "'''"): void {
    const from = this.i;
    this.i += 3;
    for (;;) {
      if (this.i >= this.text.length) {
        this.i = from;
        this.fail(`a ${quotes} string is not closed`);
      }
      if (quotes === '"""' && this.peek() === "\\") {
        this.i += 2;
        continue;
      }
      if (this.text.startsWith(quotes, this.i)) {
        this.i += 3;
        // Up to two more quote characters are part of the string's content.
        for (let n = 0; n < 2 && this.peek() === quotes[0]; n++) this.i++;
        return;
      }
      this.i++;
    }
  }

  private array(): void {
    this.i++;
    for (;;) {
      this.skipBlankLines();
      if (this.peek() === "]") break;
      this.value();
      this.skipBlankLines();
      if (this.peek() === ",") this.i++;
      else if (this.peek() !== "]") this.fail('expected "," or "]" in an array');
    }
    this.i++;
  }

  private inlineTable(): void {
    this.i++;
    for (;;) {
      this.skipBlankLines();
      if (this.peek() === "}") break;
      this.key();
      this.expect("=");
      this.value();
      this.skipBlankLines();
      if (this.peek() === ",") this.i++;
      else if (this.peek() !== "}") this.fail('expected "," or "}" in an inline table');
    }
    this.i++;
  }

  /** A number, boolean or date-time: up to the next separator (a date may hold one space). */
  private scalar(): void {
    const from = this.i;
    while (this.i < this.text.length && !/[\s,\]}#]/.test(this.peek() ?? "")) this.i++;
    if (this.i === from) this.fail("expected a value");
    if (
      /^\d{4}-\d{2}-\d{2}$/.test(this.text.slice(from, this.i)) &&
      /^ \d{2}:/.test(this.text.slice(this.i, this.i + 4))
    ) {
      this.i++;
      while (this.i < this.text.length && !/[\s,\]}#]/.test(this.peek() ?? "")) this.i++;
    }
  }
}
