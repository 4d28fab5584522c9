/**
 * The fit's figures as text: per calibrated group (a type, or a type's option-count band),
 * before (raw softmax, T = 1) and after, on the held-out answers. What `clef-web calibrate`
 * prints; the playground shows the same lines.
 */
import type { FitResult, GroupFitReport } from './fit.js';
import type { HeldOutFigures } from './types.js';

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

function row(name: string, f: HeldOutFigures): string {
  return (
    `  ${name.padEnd(7)} ECE ${f.ece.toFixed(4)}  accuracy ${pct(f.accuracy).padStart(6)}  ` +
    `coverage ${pct(f.coverage).padStart(6)}  mean set size ${f.meanSetSize.toFixed(2)}  NLL ${f.nll.toFixed(4)}`
  );
}

function group(title: string, r: GroupFitReport, coverage: number): string[] {
  const bound = r.temperatureAtBound ? ' (at the search bound)' : '';
  return [
    `${title}: ${r.n.fit} answers fitted, ${r.n.heldOut} held out; temperature ` +
      `${r.temperature.toFixed(4)}${bound}, ${pct(coverage)} set threshold ${r.threshold.toFixed(4)}`,
    row('before', r.before),
    row('after', r.after),
  ];
}

export function formatFitReport(result: FitResult): string {
  const coverage = Object.values(result.calibration.types)[0]?.coverage ?? 0;
  const lines: string[] = [
    `held-out figures (ECE: 15 bins; coverage and set size of the ${pct(coverage)} sets):`,
  ];
  for (const r of result.reports) {
    lines.push(...group(r.type, r, coverage));
    for (const b of r.bands) {
      lines.push(...group(`${r.type}, ${b.minOptions}-${b.maxOptions} options`, b, coverage));
    }
    for (const s of r.skippedBands) {
      lines.push(
        `${r.type}, ${s.minOptions}-${s.maxOptions} options: ${s.have} answers, ${s.need} needed ` +
          `for a band of its own; these questions use the ${r.type} entry`,
      );
    }
  }
  return lines.join('\n');
}
