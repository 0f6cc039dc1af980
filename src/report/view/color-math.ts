/**
 * Colour arithmetic for readable text (no DOM, so it is tested in Node): sRGB channels, painting
 * one colour over another, WCAG relative luminance and contrast, and the least change that makes
 * a text colour reach the WCAG AA ratio for text (4.5:1) on the backgrounds it is drawn on: a
 * host's secondary text on its secondary background may not.
 */

/** 0-255 channels and alpha, in sRGB. */
export type Rgba = readonly [number, number, number, number];

export const MIN_TEXT_CONTRAST = 4.5;

export function toCss([r, g, b, a]: Rgba): string {
  return a >= 255 ? `rgb(${r}, ${g}, ${b})` : `rgba(${r}, ${g}, ${b}, ${(a / 255).toFixed(3)})`;
}

/** `top` painted over an opaque `bottom`. */
export function over(top: Rgba, bottom: Rgba): Rgba {
  const t = top[3] / 255;
  const mix = (i: 0 | 1 | 2) => Math.round(top[i] * t + bottom[i] * (1 - t));
  return [mix(0), mix(1), mix(2), 255];
}

/** WCAG relative luminance of an opaque colour. */
export function luminance([r, g, b]: Rgba): number {
  const linear = (c: number) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
}

/** WCAG contrast ratio of two opaque colours (1 to 21). */
export function contrast(a: Rgba, b: Rgba): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

function worstContrast(color: Rgba, backgrounds: readonly Rgba[]): number {
  return Math.min(...backgrounds.map((bg) => contrast(over(color, bg), bg)));
}

function mixTowards(color: Rgba, target: Rgba, t: number): Rgba {
  const mix = (i: 0 | 1 | 2) => Math.round(color[i] + (target[i] - color[i]) * t);
  return [mix(0), mix(1), mix(2), 255];
}

/**
 * `color` if it reads at `min` contrast on every opaque background given; otherwise the least
 * change towards black or white (whichever reads better there) that does. Black or white always
 * reaches 4.5:1 on one background; on several very different ones the better of them is returned.
 */
export function readable(color: Rgba, backgrounds: readonly Rgba[], min = MIN_TEXT_CONTRAST): Rgba {
  if (backgrounds.length === 0 || worstContrast(color, backgrounds) >= min) return color;
  const black: Rgba = [0, 0, 0, 255];
  const white: Rgba = [255, 255, 255, 255];
  const target =
    worstContrast(black, backgrounds) >= worstContrast(white, backgrounds) ? black : white;
  const start = over(color, backgrounds[0] as Rgba);
  if (worstContrast(target, backgrounds) < min) return target;
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 12; i++) {
    const mid = (lo + hi) / 2;
    if (worstContrast(mixTowards(start, target, mid), backgrounds) >= min) hi = mid;
    else lo = mid;
  }
  return mixTowards(start, target, hi);
}
