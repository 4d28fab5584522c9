/** The model cards of a package `clef-web serve` answers with, in its process or a worker. */
import { nodeDeviceOf } from '../../core/devices.js';
import { modelCards } from '../../core/model-card.js';
import type { ModelCard } from '../../protocol/types.js';
import type { NodeEngine } from '../engine.js';

export function nodeModelCards(engine: NodeEngine): ModelCard[] {
  const { model, variant } = engine.manifest;
  return modelCards({
    names: engine.models,
    model: model.name,
    dtype: variant.dtype,
    releaseDate: model.releaseDate,
    where: `served by clef-web on ${nodeDeviceOf(engine.runtime).label}`,
  });
}
