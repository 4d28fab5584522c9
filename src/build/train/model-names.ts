/**
 * The package answers to one model name, and the verify phase sends the examples' requests as
 * written: a request naming another model would be refused there, after the fit. So it is
 * refused in the check phase instead, every such line listed.
 */
import type { LabelledExample } from '../../calibrate/examples.js';
import { TrainError } from './errors.js';

export function checkModelNames(examples: readonly LabelledExample[], name: string): void {
  const other = examples.filter((e) => e.valid.model !== name).sort((a, b) => a.line - b.line);
  if (other.length === 0) return;
  const models = [...new Set(other.map((e) => e.valid.model))].map((m) => JSON.stringify(m));
  const lines = other
    .slice(0, 20)
    .map((e) => e.line)
    .join(', ');
  throw new TrainError(
    'examples_invalid',
    `the package answers to the model name ${JSON.stringify(name)}, but ${other.length} request${other.length === 1 ? '' : 's'} ask${other.length === 1 ? 's' : ''} for ${models.join(', ')} (line${other.length === 1 ? '' : 's'} ${lines}${other.length > 20 ? ', ...' : ''}): give every request the same "model", and --name that name or none`,
    { lines: other.map((e) => e.line) },
  );
}
