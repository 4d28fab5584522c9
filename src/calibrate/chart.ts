/**
 * A reliability diagram as SVG text: per confidence bin, the accuracy (bars) against the
 * diagonal of perfect calibration, before and after, side by side. Pure string building, so the
 * playground's chart and any committed diagram are drawn by the same code. Every value is a number; the titles are escaped.
 */
import type { ReliabilityBin } from './types.js';

export interface ReliabilityPanel {
  title: string;
  bins: readonly ReliabilityBin[];
  ece: number;
}

function escapeXml(text: string): string {
  return text.replace(
    /[<>&"']/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}

const SIZE = 220;
const PAD = { left: 40, right: 12, top: 34, bottom: 36 };
const r = (x: number) => Math.round(x * 10) / 10;

function panel(p: ReliabilityPanel, x0: number): string {
  const w = SIZE;
  const h = SIZE;
  const px = (v: number) => r(x0 + PAD.left + v * w);
  const py = (v: number) => r(PAD.top + (1 - v) * h);
  const total = p.bins.reduce((n, b) => n + b.count, 0) || 1;
  const parts: string[] = [
    `<text x="${px(0.5)}" y="${PAD.top - 18}" text-anchor="middle" font-weight="bold">${escapeXml(p.title)}</text>`,
    `<text x="${px(0.5)}" y="${PAD.top - 5}" text-anchor="middle">ECE ${p.ece.toFixed(3)}</text>`,
    `<rect x="${px(0)}" y="${py(1)}" width="${w}" height="${h}" fill="#fafafa" stroke="#999"/>`,
  ];
  for (const b of p.bins) {
    if (b.count === 0) continue;
    const bw = (b.hi - b.lo) * w;
    // Bar: the bin's accuracy; its opacity grows with the bin's share of the answers.
    const opacity = r(0.35 + 0.65 * Math.sqrt(b.count / total));
    parts.push(
      `<rect class="bar" x="${px(b.lo)}" y="${py(b.accuracy)}" width="${r(bw - 1)}" height="${r(b.accuracy * h)}" fill="#3b6fb6" fill-opacity="${opacity}"><title>${b.count} answers, confidence ${b.meanConfidence.toFixed(3)}, accuracy ${b.accuracy.toFixed(3)}</title></rect>`,
      `<circle cx="${r(px(b.lo) + bw / 2)}" cy="${py(b.meanConfidence)}" r="2.5" fill="#d9534f"/>`,
    );
  }
  parts.push(
    `<line x1="${px(0)}" y1="${py(0)}" x2="${px(1)}" y2="${py(1)}" stroke="#555" stroke-dasharray="4 3"/>`,
  );
  for (const t of [0, 0.5, 1]) {
    parts.push(
      `<text x="${px(t)}" y="${py(0) + 14}" text-anchor="middle">${t}</text>`,
      `<text x="${px(0) - 6}" y="${py(t) + 4}" text-anchor="end">${t}</text>`,
    );
  }
  parts.push(
    `<text x="${px(0.5)}" y="${py(0) + 30}" text-anchor="middle">confidence</text>`,
    `<text transform="translate(${px(0) - 28} ${py(0.5)}) rotate(-90)" text-anchor="middle">accuracy</text>`,
  );
  return parts.join('\n');
}

/** Panels side by side (e.g. before, after); bars = accuracy, dots = mean confidence. */
export function reliabilitySvg(panels: readonly ReliabilityPanel[], caption = ''): string {
  const pw = PAD.left + SIZE + PAD.right;
  const width = pw * panels.length;
  const height = PAD.top + SIZE + PAD.bottom + (caption ? 18 : 0);
  const body = panels.map((p, i) => panel(p, i * pw)).join('\n');
  const note = caption
    ? `<text x="${width / 2}" y="${height - 6}" text-anchor="middle">${escapeXml(caption)}</text>`
    : '';
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11" role="img">\n` +
    `<title>Reliability diagram</title>\n${body}\n${note}\n</svg>\n`
  );
}
