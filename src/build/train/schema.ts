/**
 * How the training requests asked each trained question: the instructions most of them gave and
 * every description each option was given (the most common first). The manifest's `training`
 * section carries them, so the page can put the trained question in a form and say when a request
 * asks something else (src/core/untrained.ts).
 */
import type { LabelledExample } from '../../calibrate/examples.js';
import { writeJson } from '../../core/record.js';
import type { JsonValue } from '../../protocol/types.js';

export interface QuestionSchema {
  /** The instructions most requests gave, null when most gave none. */
  instructions: string | null;
  /** Per option id, the descriptions requests gave it, most common first (null: none). */
  descriptions: Record<string, JsonValue[]>;
}

/** Descriptions kept per option (a file that varies them more is summarised by the commonest). */
const KEPT_DESCRIPTIONS = 8;

function byCount(counts: Map<string, number>): string[] {
  return [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([k]) => k);
}

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** The schema of each labelled question id, from the requests that label it. */
export function questionSchemas(
  examples: readonly LabelledExample[],
  ids: ReadonlySet<string>,
): Map<string, QuestionSchema> {
  const instructions = new Map<string, Map<string, number>>();
  const descriptions = new Map<string, Map<string, Map<string, number>>>();
  for (const example of examples) {
    for (const q of example.valid.questions) {
      if (!ids.has(q.id) || !example.labels.has(q.id)) continue;
      let seen = instructions.get(q.id);
      if (seen === undefined) instructions.set(q.id, (seen = new Map()));
      bump(seen, JSON.stringify(typeof q.instructions === 'string' ? q.instructions : null));
      let options = descriptions.get(q.id);
      if (options === undefined) descriptions.set(q.id, (options = new Map()));
      for (const [id, description] of q.criteria) {
        let given = options.get(id);
        if (given === undefined) options.set(id, (given = new Map()));
        bump(given, writeJson(description));
      }
    }
  }
  const out = new Map<string, QuestionSchema>();
  for (const [id, seen] of instructions) {
    const options = descriptions.get(id) ?? new Map<string, Map<string, number>>();
    out.set(id, {
      instructions: JSON.parse(byCount(seen)[0] as string) as string | null,
      descriptions: Object.fromEntries(
        [...options].map(([option, given]) => [
          option,
          byCount(given)
            .slice(0, KEPT_DESCRIPTIONS)
            .map((d) => JSON.parse(d) as JsonValue),
        ]),
      ),
    });
  }
  return out;
}
