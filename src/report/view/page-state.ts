import {
  type Lang,
  langOfLocale,
  type ReportMessages,
  type ReportText,
  reportText,
} from "../i18n/index.js";
import type { Chart, ReportModel, ReportPlace } from "../model.js";
import type { DrawnChart } from "./charts.js";

/**
 * All the page's mutable state, in one object that main.ts makes once and hands to every module
 * that builds, lays out, paints or connects the page: no module keeps state of its own.
 */

export interface FigureView {
  chart: Chart;
  /** The chart in a model, found again in the next one (same data, other words). */
  pick: (model: ReportModel) => Chart | undefined;
  figure: HTMLElement;
  canvasBox: HTMLElement;
  tableBody: HTMLElement;
  drawn?: DrawnChart;
}

/** Writes one part of the model (or of the catalogue) into the page again. */
export type Binder = (model: ReportModel, m: ReportMessages) => void;

export interface PageState {
  /** #report: everything the page shows is inside it. */
  readonly root: HTMLElement;
  figures: FigureView[];
  binders: Binder[];
  /** What is shown: the result and where, or a status line. */
  shown: { data: unknown; place: ReportPlace; model: ReportModel } | undefined;
  status: { say: (m: ReportMessages) => string; error: boolean } | undefined;
  /** The language and locale the page writes in. */
  text: ReportText;
}

export function createPageState(root: HTMLElement, text: ReportText): PageState {
  return { root, figures: [], binders: [], shown: undefined, status: undefined, text };
}

/** The language of a locale's tag, with that locale's figures. */
export function textFor(locale: string | undefined, lang: Lang = langOfLocale(locale)): ReportText {
  return reportText(lang, locale);
}
