/**
 * Text from outside (a token's claim, a tool name a client made up) shown to a person: every
 * character a terminal acts on instead of printing becomes a visible escape, so a name carrying
 * CR or ESC cannot erase the line it is on or print a forged one. Covered: C0 and C1 controls,
 * DEL, the line and paragraph separators, and the bidirectional controls that reorder what follows.
 */
const CONTROLS =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function escapeOne(char: string): string {
  const named = NAMED[char];
  if (named !== undefined) return named;
  const code = char.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** `text` with control characters written as `\r`, `\n`, `\t`, `\x1b`, `\u202e`. */
export function printable(text: string): string {
  return text.replace(CONTROLS, escapeOne);
}
