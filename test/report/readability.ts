import type { Frame, Page } from "playwright-core";
import { inPage } from "./browser-support.js";

/**
 * Text contrast of the report view as drawn, measured in the browser (WCAG 2 contrast ratio):
 * - on each chart canvas, every fully opaque pixel in the margins around the plot (where only
 *   the axis labels are drawn: the view draws no ticks there) against the chart's background;
 *   a label the canvas drew in a colour it could not read (black, for a CSS colour it rejects)
 *   shows up here as pixels of that colour;
 * - every visible element of the page that holds text, its computed colour against the colours
 *   behind it.
 * Colours are turned into sRGB by painting them on a 1x1 canvas, so any CSS colour syntax counts.
 */

export interface CanvasContrast {
  chart: string;
  /** Opaque label pixels found in the margins. */
  pixels: number;
  /** The lowest contrast among them. */
  min: number;
  /** The colour of the pixel with the lowest contrast, and the background. */
  worst: string;
  background: string;
  /** The label pixels' colours, most frequent first (at most 3). */
  colors: string[];
}

export interface TextContrast {
  text: string;
  tag: string;
  ratio: number;
  color: string;
  background: string;
}

export interface Readability {
  canvases: CanvasContrast[];
  /** Text elements below 4.5:1, worst first (empty when all read). */
  poorText: TextContrast[];
  /** How many text elements were measured. */
  textElements: number;
}

const MEASURE = `(() => {
  const pixel = document.createElement("canvas");
  pixel.width = 1;
  pixel.height = 1;
  const pc = pixel.getContext("2d", { willReadFrequently: true });
  const rgba = (css) => {
    pc.clearRect(0, 0, 1, 1);
    pc.fillStyle = "#000";
    pc.fillStyle = css;
    pc.fillRect(0, 0, 1, 1);
    return [...pc.getImageData(0, 0, 1, 1).data];
  };
  const over = (top, bottom) => {
    const t = top[3] / 255;
    return [0, 1, 2].map((i) => Math.round(top[i] * t + bottom[i] * (1 - t))).concat(255);
  };
  const lum = ([r, g, b]) => {
    const f = (c) => {
      const s = c / 255;
      return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const ratio = (a, b) => {
    const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  const css = (c) => "rgb(" + c.slice(0, 3).join(", ") + ")";
  // What shows behind an element: its own and its ancestors' backgrounds over the page's canvas.
  const canvasProbe = document.createElement("span");
  canvasProbe.style.color = "Canvas";
  document.body.append(canvasProbe);
  const pageCanvas = rgba(getComputedStyle(canvasProbe).color);
  canvasProbe.remove();
  const behind = (element) => {
    const layers = [];
    for (let e = element; e !== null; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] === 255) break;
    }
    let out = [...pageCanvas.slice(0, 3), 255];
    for (const layer of layers.reverse()) out = over(layer, out);
    return out;
  };

  const canvases = [];
  for (const box of document.querySelectorAll(".chart")) {
    const canvas = box.querySelector("canvas");
    const plot = box.querySelector(".u-over");
    if (canvas === null || plot === null) continue;
    const bg = behind(box);
    const scale = canvas.width / canvas.getBoundingClientRect().width;
    const c = canvas.getBoundingClientRect();
    const p = plot.getBoundingClientRect();
    // The plot's rectangle in canvas pixels, grown by 4 CSS px: a point on the plot's edge may
    // reach a little beyond it.
    const left = (p.left - c.left - 4) * scale;
    const right = (p.right - c.left + 4) * scale;
    const top = (p.top - c.top - 4) * scale;
    const bottom = (p.bottom - c.top + 4) * scale;
    const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    // Opaque pixels counted by colour (0xRRGGBB), in the order first met; the contrast is then
    // worked out once per colour rather than once per pixel.
    const counts = new Map();
    const count = (y, from, to) => {
      for (let x = from; x < to; x++) {
        const i = (y * canvas.width + x) * 4;
        if (data[i + 3] !== 255) continue;
        const key = (data[i] << 16) | (data[i + 1] << 8) | data[i + 2];
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    };
    for (let y = 0; y < canvas.height; y++) {
      if (y >= top && y <= bottom) {
        count(y, 0, Math.min(canvas.width, Math.ceil(left)));
        count(y, Math.max(0, Math.floor(right) + 1), canvas.width);
      } else {
        count(y, 0, canvas.width);
      }
    }
    let pixels = 0;
    let min = Infinity;
    let worst = [0, 0, 0, 255];
    for (const [key, n] of counts) {
      const color = [key >> 16, (key >> 8) & 255, key & 255, 255];
      const r = ratio(color, bg);
      pixels += n;
      if (r < min) {
        min = r;
        worst = color;
      }
    }
    const colors = [...counts]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([key]) => css([key >> 16, (key >> 8) & 255, key & 255]));
    canvases.push({ chart: box.dataset.chart, pixels, min, worst: css(worst), background: css(bg), colors });
  }

  const poorText = [];
  let textElements = 0;
  for (const e of document.querySelectorAll("#report *")) {
    const own = [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== "");
    if (!own || e.getClientRects().length === 0) continue;
    const style = getComputedStyle(e);
    if (style.visibility === "hidden" || style.display === "none") continue;
    textElements++;
    const bg = behind(e);
    const fg = over(rgba(style.color), bg);
    const r = ratio(fg, bg);
    if (r < 4.5) {
      poorText.push({
        text: e.textContent.trim().slice(0, 60),
        tag: e.tagName.toLowerCase() + (e.className ? "." + e.className : ""),
        ratio: Math.round(r * 100) / 100,
        color: css(fg),
        background: css(bg),
      });
    }
  }
  poorText.sort((a, b) => a.ratio - b.ratio);
  return { canvases, poorText, textElements };
})()`;

export function measureReadability(frame: Page | Frame): Promise<Readability> {
  return inPage<Readability>(frame, MEASURE);
}
