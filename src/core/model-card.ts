/**
 * The model cards `GET /v1/models` lists: one per name a request may use (the package's name,
 * then its aliases), each saying which model and variant answers and where it runs. The page
 * (src/client/clef.ts), `clef-web serve` and its engine workers all build them here.
 */
import type { ModelCard } from '../protocol/types.js';

export interface CardFacts {
  /** Names a request may use: the package's model name, then its aliases. */
  names: readonly string[];
  /** The package's model name. */
  model: string;
  /** The package variant's weight dtype. */
  dtype: string;
  /** YYYY-MM-DD */
  releaseDate: string;
  /** Where it runs, as the description ends: `running in this browser on webgpu`. */
  where: string;
}

export function modelCards(facts: CardFacts): ModelCard[] {
  const description = `${facts.model} (${facts.dtype}) ${facts.where}`;
  return facts.names.map((name) => ({ name, description, release_date: facts.releaseDate }));
}
