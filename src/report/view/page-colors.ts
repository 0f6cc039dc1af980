import type { ChartColors } from "./charts.js";
import { over, type Rgba, readable, toCss } from "./color-math.js";
import { ColorProbe } from "./color-probe.js";

/**
 * The page's colours in the theme in force, resolved by the browser from style.css (whose
 * variables take the host's style variables first). The charts get finished colours; the page's
 * own text gets `--text*` variables moved just enough to read at 4.5:1 on the page and on the
 * cards, so a host colour that does not (a secondary text on a secondary background) still reads.
 */

/** Palette slots in style.css (--series-1 ...). */
const SERIES_SLOTS = 10;

export function resolveColors(root: HTMLElement): ChartColors {
  const probe = new ColorProbe(root);
  try {
    // The browser's own canvas colour for the scheme in force: what shows under a transparent page.
    const canvas = probe.rgba("Canvas");
    const page = over(probe.rgba("var(--bg)"), opaque(canvas));
    const card = over(probe.rgba("var(--bg-card)"), page);
    const onCards = (name: string) => readable(probe.rgba(`var(${name})`), [card]);
    const onPage = (name: string) => readable(probe.rgba(`var(${name})`), [page, card]);
    const accent = over(probe.rgba("var(--accent)"), card);
    const style = document.documentElement.style;
    style.setProperty("--text", toCss(onPage("--fg")));
    style.setProperty("--text-muted", toCss(onPage("--fg-muted")));
    style.setProperty("--text-danger", toCss(onPage("--danger")));
    style.setProperty("--text-better", toCss(onPage("--better")));
    style.setProperty("--text-worse", toCss(onPage("--worse")));
    style.setProperty("--on-accent", toCss(readable(page, [accent])));
    return {
      text: toCss(onCards("--fg")),
      muted: toCss(onCards("--fg-muted")),
      grid: probe.css("var(--grid)"),
      series: Array.from({ length: SERIES_SLOTS }, (_, i) => probe.css(`var(--series-${i + 1})`)),
      failed: probe.css("var(--series-failed)"),
      font: probe.fontFamily("var(--font)"),
    };
  } finally {
    probe.remove();
  }
}

function opaque([r, g, b]: Rgba): Rgba {
  return [r, g, b, 255];
}
