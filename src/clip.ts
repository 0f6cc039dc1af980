/**
 * Input echoed in a message is cut: a model that sends a 1 MB argument must not get it back
 * (twice, for an unknown argument's name) in an error that fills its context. What was cut says
 * how long the original was, so the reader still learns what was wrong with it.
 */

/** Longest run without whitespace an error text keeps (IDs, call hints and URLs fit easily). */
const MAX_RUN = 160;
/** Longest error text; the longest we write (a split suggestion with two calls) is ~1,000. */
const MAX_TEXT = 4000;

function cut(value: string, keep: number): string {
  return `${value.slice(0, keep)}… (${value.length.toLocaleString("en-US")} characters)`;
}

/** One value from outside, as shown in a message: at most `max` characters and a length note. */
export function clipValue(value: string, max = 64): string {
  return value.length <= max ? value : cut(value, max);
}

/**
 * A whole message made safe to show whatever it quotes: every run of more than MAX_RUN
 * characters without whitespace is cut, then the text as a whole to MAX_TEXT.
 */
export function clipEchoes(text: string): string {
  const runs = text.length <= MAX_RUN ? text : text.replace(/\S{161,}/g, (run) => cut(run, 60));
  if (runs.length <= MAX_TEXT) return runs;
  return `${runs.slice(0, MAX_TEXT)}… (message cut at ${MAX_TEXT.toLocaleString("en-US")} of ${runs.length.toLocaleString("en-US")} characters)`;
}
