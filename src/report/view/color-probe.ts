import type { Rgba } from "./color-math.js";

/**
 * Colours as the browser resolves them. A host hands its style variables over as CSS (the
 * ext-apps basic host sends `light-dark(#1f2937, #f3f4f6)`); a canvas takes only a finished
 * colour and ignores anything else, drawing black. So every colour the charts use is set on a
 * hidden probe element and read back from its computed style, which resolves var(), light-dark()
 * and any colour syntax the browser knows, in the theme in force; painting it on a 1x1 canvas
 * gives its sRGB channels.
 */

export class ColorProbe {
  private readonly probe: HTMLElement;
  private readonly pixel: CanvasRenderingContext2D | null;

  constructor(parent: HTMLElement) {
    this.probe = document.createElement("span");
    this.probe.hidden = true;
    this.probe.setAttribute("aria-hidden", "true");
    parent.append(this.probe);
    const canvas = document.createElement("canvas");
    canvas.width = 1;
    canvas.height = 1;
    this.pixel = canvas.getContext("2d", { willReadFrequently: true });
  }

  /** Any CSS colour (`var(--fg)`, `light-dark(...)`, `oklch(...)`) as its computed value. */
  css(value: string): string {
    this.probe.style.color = "";
    this.probe.style.color = value;
    return getComputedStyle(this.probe).color;
  }

  /** The colour's sRGB channels, as a canvas paints it (so any syntax the browser knows works). */
  rgba(value: string): Rgba {
    const ctx = this.pixel;
    const css = this.css(value);
    if (ctx === null) return parseRgb(css) ?? [0, 0, 0, 255];
    ctx.clearRect(0, 0, 1, 1);
    ctx.fillStyle = "#000";
    ctx.fillStyle = css;
    ctx.fillRect(0, 0, 1, 1);
    const [r = 0, g = 0, b = 0, a = 0] = ctx.getImageData(0, 0, 1, 1).data;
    return [r, g, b, a];
  }

  /** A CSS font-family value (`var(--font)`) as the computed list. */
  fontFamily(value: string): string {
    this.probe.style.fontFamily = value;
    return getComputedStyle(this.probe).fontFamily || "sans-serif";
  }

  remove(): void {
    this.probe.remove();
  }
}

function parseRgb(css: string): Rgba | undefined {
  const m = /^rgba?\(\s*([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\s*\)$/.exec(css);
  if (m === null) return undefined;
  return [Number(m[1]), Number(m[2]), Number(m[3]), Math.round(Number(m[4] ?? 1) * 255)];
}
