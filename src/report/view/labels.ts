/**
 * Category labels cut to fit an axis. The part that tells bars apart is often at the end (a
 * round's label ends with its A/B group: "tsk_7814637a2… 11-07 09:00 A"), so a long label keeps
 * its end and gives up its middle: "tsk_781… 11-07 09:00 A". Labels that were distinct stay
 * distinct, or are left whole. The full text is in the legend while hovering and in the table.
 */

/** Share of a cut label's room given to its end, tried in turn until the labels stay distinct. */
const TAIL_SHARES = [0.6, 0.8, 1];

export function shortLabels(labels: readonly string[], maxChars: number): string[] {
  const distinct = new Set(labels).size;
  for (const share of TAIL_SHARES) {
    const cut = labels.map((l) => shorten(l, maxChars, share));
    if (new Set(cut).size === distinct) return cut;
  }
  return [...labels];
}

/** `text` within `max` characters: its start, an ellipsis, and its end from a word on. */
export function shorten(text: string, max: number, tailShare = TAIL_SHARES[0] as number): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  const room = Math.max(2, max);
  const tailLength = Math.max(1, Math.round((room - 1) * tailShare));
  let tail = chars.slice(chars.length - tailLength);
  let separator = "…";
  if (chars[chars.length - tailLength - 1] === " ") {
    separator = "… ";
  } else {
    const space = tail.indexOf(" ");
    if (space >= 0 && space < tail.length - 1 && space <= tail.length / 2) {
      tail = tail.slice(space + 1);
      separator = "… ";
    }
  }
  const headLength = Math.max(0, room - tail.length - separator.length);
  const head = chars.slice(0, headLength).join("").trimEnd();
  return head === "" ? `…${tail.join("")}` : `${head}${separator}${tail.join("")}`;
}
