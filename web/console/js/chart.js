// Horizontal bar charts drawn as SVG: one bar per TopN row or GroupBy group. The SVG scales to
// its container (viewBox) and carries a text description for screen readers.
import { fmtNumber, s } from './dom.js';

const MAX_BARS = 40;
const BAR = 20;
const GAP = 6;
const PLOT_W = 320;
const VALUE_W = 70;
const CHAR_W = 8; // 13px monospace
const MAX_LABEL_CHARS = 28;

function clip(text, max) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** bars: [{ label, value }], largest first as the server sent them. */
export function barChart(bars, title) {
  const shown = bars.slice(0, MAX_BARS);
  const max = Math.max(1, ...shown.map((b) => b.value));
  // Drawn at its natural size (1 unit = 1 px) so text stays legible; CSS only shrinks it to fit.
  const longest = Math.max(1, ...shown.map((b) => Math.min(MAX_LABEL_CHARS, b.label.length)));
  const labelW = longest * CHAR_W + 14;
  const plotW = PLOT_W;
  const width = labelW + plotW + VALUE_W;
  const height = shown.length * (BAR + GAP) + GAP;
  const summary = shown.map((b) => `${b.label}: ${b.value}`).join(', ');
  const svg = s(
    'svg',
    { class: 'chart', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': `${title}. ${summary}` },
    s('title', {}, title),
    shown.map((b, i) => {
      const y = GAP + i * (BAR + GAP);
      const w = Math.max(b.value > 0 ? 2 : 0, Math.round((b.value / max) * plotW));
      return s(
        'g',
        { class: 'bar' },
        s('title', {}, `${b.label}: ${fmtNumber(b.value)}`),
        s('text', { x: labelW - 8, y: y + BAR / 2, class: 'bar-label', 'text-anchor': 'end', 'dominant-baseline': 'central' }, clip(b.label, MAX_LABEL_CHARS)),
        s('rect', { x: labelW, y, width: w, height: BAR, rx: 3 }),
        s('text', { x: labelW + w + 6, y: y + BAR / 2, class: 'bar-value', 'dominant-baseline': 'central' }, fmtNumber(b.value)),
      );
    }),
  );
  return svg;
}

export const CHART_MAX_BARS = MAX_BARS;
