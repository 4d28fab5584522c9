/**
 * What a request asks beyond what a trained package was trained on (its manifest's `training`
 * section): a question that matches no trained question (by id, or else by having only one
 * trained question's options, since the model reads options and descriptions, not ids), an
 * option id it never saw, or an option whose description differs from every one the training
 * requests gave. Such answers carry no
 * information, so the decision says so (`DecisionWire.untrained`, `NodeDecision.untrained`) and
 * the playground and `<clef-decide>` show it. Packages without a training section (converted
 * releases such as Clef-flash) answer anything: nothing is reported for them.
 */
import { promptOptions, renderOptionSemantics } from '../clef/prompt.js';
import type { JsonValue, ValidRequest } from '../protocol/types.js';
import type { UntrainedPart } from '../wire/wire.js';

export type { UntrainedPart };

/** What of a package's `training` section (telemetry.ts TrainingSummary) the check reads. */
export interface TrainedQuestions {
  questions: ReadonlyArray<{
    id: string;
    options: readonly string[];
    descriptions?: Record<string, readonly JsonValue[]>;
  }>;
}

const quoted = (s: string) => JSON.stringify(s);

function list(items: readonly string[], max = 8): string {
  const shown = items.slice(0, max).join(', ');
  return items.length > max ? `${shown}, ... ${items.length} in all` : shown;
}

/** The parts of `request` the package was not trained on ([] for an untrained-on package). */
export function untrainedParts(
  training: TrainedQuestions | null | undefined,
  request: ValidRequest,
): UntrainedPart[] {
  if (!training) return [];
  const parts: UntrainedPart[] = [];
  const trainedIds = training.questions.map((q) => q.id);
  for (const q of request.questions) {
    const asked = q.type === 'choice' ? promptOptions(q).map(([o]) => o) : [];
    // The model reads a question's options and their descriptions, not its id: a question under
    // another id whose options are all one trained question's is that question.
    const trained =
      training.questions.find((t) => t.id === q.id) ??
      (asked.length > 0
        ? training.questions.find((t) => asked.every((o) => t.options.includes(o)))
        : undefined);
    if (trained === undefined || q.type !== 'choice') {
      parts.push({
        question: q.id,
        kind: 'question',
        message:
          trained === undefined
            ? `question ${quoted(q.id)} was not trained: no trained question has its id or all its options (this model was trained on ${list(trainedIds.map(quoted))}); its answer carries no information`
            : `question ${quoted(q.id)} is asked as ${q.type}, but was trained as a choice: its answer carries no information`,
      });
      continue;
    }
    const options = new Set(trained.options);
    for (const [option, description] of promptOptions(q)) {
      if (!options.has(option)) {
        parts.push({
          question: q.id,
          kind: 'option',
          option,
          message: `question ${quoted(q.id)}: option ${quoted(option)} was not trained (the trained options: ${list(trained.options)})`,
        });
        continue;
      }
      const given = trained.descriptions?.[option];
      if (given === undefined || given.length === 0) continue;
      const asked = renderOptionSemantics(option, description);
      if (!given.some((d) => renderOptionSemantics(option, d) === asked)) {
        parts.push({
          question: q.id,
          kind: 'description',
          option,
          message: `question ${quoted(q.id)}: option ${quoted(option)} has a description the model was not trained with (${description === null ? 'none' : JSON.stringify(description)}; trained: ${given.map((d) => (d === null ? 'none' : JSON.stringify(d))).join(' or ')})`,
        });
      }
    }
  }
  return parts;
}
