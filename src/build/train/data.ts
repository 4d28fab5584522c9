/**
 * From a labelled-examples file to what the matcher fits: checks that refuse bad input before any
 * work (every bad line listed with its number), the tokenizer trained on the file's own text, and
 * each example's bag and option spans as the Clef prompt lays them out.
 */
import {
  ALLOWED_OPTIONS_HEADER,
  effectiveInstructions,
  encodeRequest,
  fieldHeader,
  FIELD_END,
  optionLabel,
  PROMPT_PREFIX,
  PROMPT_SUFFIX,
  promptOptions,
  renderOptionSemantics,
  SCHEMA_HEADER,
} from '../../clef/prompt.js';
import { loadTokenizerSync, type ClefTokenizer } from '../../clef/tokenizer.js';
import { stateKey, type LabelledExample } from '../../calibrate/examples.js';
import { renderValue } from '../../protocol/render.js';
import type { ModelExample } from './model.js';
import { MAX_LAG } from './pairs.js';
import { trainBpeTokenizer, type TrainedTokenizer } from './bpe.js';
import { TrainError } from './errors.js';
import { questionSchemas, type QuestionSchema } from './schema.js';

/** Fewest labelled examples an option needs (in the training part, after the holdout split). */
export const MIN_EXAMPLES_PER_OPTION = 5;
/**
 * Template text is a small share of the corpus; weighting it keeps its words whole tokens. When a
 * large corpus and a small vocabulary still split one (CLINC150 with descriptions: 30,200
 * requests, 15,000 distinct schemas, 1,603 tokens), the tokenizer is trained once more with the
 * template weighted as the whole corpus.
 */
const TEMPLATE_WEIGHT = 300;

/** A question the model is trained on: its id and its options (prompt order). */
export interface TrainedQuestion {
  id: string;
  options: string[];
  /** Labelled examples per option, in the training part. */
  counts: Record<string, number>;
  /** How the training requests asked it (schema.ts): instructions, each option's descriptions. */
  schema?: QuestionSchema;
}

/**
 * Refuses what the matcher cannot learn, listing every problem: labelled noul or score questions,
 * options with too few examples, and the same option text in two questions (their options would
 * be scored alike).
 */
export function checkExamples(
  train: readonly LabelledExample[],
  /** Labelled answers the calibration needs (calibrate/fit.ts requiredAnswers), at least. */
  minAnswers = 0,
): TrainedQuestion[] {
  const problems: string[] = [];
  const questions = new Map<string, TrainedQuestion>();
  const semanticsOwner = new Map<string, string>();
  // Each option's different texts (repeats.ts stateKey): copies of a line count once.
  const texts = new Map<string, Set<string>>();
  for (const example of train) {
    for (const q of example.valid.questions) {
      const label = example.labels.get(q.id);
      if (label === undefined) continue;
      if (q.type !== 'choice') {
        problems.push(
          `line ${example.line}: question ${JSON.stringify(q.id)} is ${q.type}: train learns choice questions only; ask it as a choice (a yes/no gate is a choice with options "yes" and "no", a score a choice over its levels) and label the option id`,
        );
        continue;
      }
      const options = promptOptions(q);
      let entry = questions.get(q.id);
      if (entry === undefined) questions.set(q.id, (entry = { id: q.id, options: [], counts: {} }));
      for (const [id, description] of options) {
        if (!entry.options.includes(id)) {
          entry.options.push(id);
          entry.counts[id] = 0;
        }
        const semantics = renderOptionSemantics(id, description);
        const owner = semanticsOwner.get(semantics);
        if (owner === undefined) semanticsOwner.set(semantics, q.id);
        else if (owner !== q.id) {
          problems.push(
            `line ${example.line}: option ${JSON.stringify(id)} of question ${JSON.stringify(q.id)} reads exactly as an option of question ${JSON.stringify(owner)}: the model scores an option by its id and description, so give it another id or description`,
          );
        }
      }
      const chosen = (options[label] as [string, unknown])[0];
      entry.counts[chosen] = (entry.counts[chosen] ?? 0) + 1;
      const key = `${q.id}\u0000${chosen}`;
      texts.set(key, (texts.get(key) ?? new Set()).add(stateKey(example)));
    }
  }
  for (const q of questions.values()) {
    q.options.sort();
    for (const option of q.options) {
      const n = q.counts[option] ?? 0;
      if (n < MIN_EXAMPLES_PER_OPTION) {
        problems.push(
          `question ${JSON.stringify(q.id)}: option ${JSON.stringify(option)} has ${n} labelled example${n === 1 ? '' : 's'} for training; it needs at least ${MIN_EXAMPLES_PER_OPTION} (docs/training.md: accuracy by examples per option)`,
        );
        continue;
      }
      const distinct = texts.get(`${q.id}\u0000${option}`)?.size ?? 0;
      if (distinct < MIN_EXAMPLES_PER_OPTION) {
        problems.push(
          `question ${JSON.stringify(q.id)}: option ${JSON.stringify(option)} has ${n} labelled examples for training but ${distinct} different text${distinct === 1 ? '' : 's'} (a line that repeats another's text, case, spacing and punctuation aside, counts once); it needs at least ${MIN_EXAMPLES_PER_OPTION} different texts (docs/training.md: accuracy by examples per option)`,
        );
      }
    }
  }
  if (questions.size === 0) problems.push('no labelled choice question in the file');
  let answers = 0;
  for (const q of questions.values()) for (const n of Object.values(q.counts)) answers += n;
  if (questions.size > 0 && answers < minAnswers) {
    problems.push(
      `${answers} labelled answer${answers === 1 ? '' : 's'} in all; at least ${minAnswers} are needed to calibrate the model's probabilities (docs/calibration.md), which every trained model ships with`,
    );
  }
  if (problems.length > 0) {
    const listed = [...new Set(problems)];
    const shown = listed.slice(0, 50).map((p) => `  ${p}`);
    if (listed.length > 50) shown.push(`  ... and ${listed.length - 50} more`);
    throw new TrainError(
      'examples_unlearnable',
      `Cannot train on these examples:\n${shown.join('\n')}`,
      {
        problems: listed,
      },
    );
  }
  const schemas = questionSchemas(train, new Set(questions.keys()));
  return [...questions.values()]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((q) => ({ ...q, schema: schemas.get(q.id) }));
}

/** Texts the tokenizer learns from: each once, and texts counted as if repeated (bpe.ts). */
interface Corpus {
  texts: string[];
  counted: Array<readonly [string, number]>;
}

/** The requests' texts the tokenizer learns from: states, and each schema's pieces, weighted. */
function corpus(examples: readonly LabelledExample[]): Corpus {
  const texts: string[] = [];
  const counted: Array<readonly [string, number]> = [];
  const seenSchema = new Set<string>();
  for (const example of examples) {
    texts.push(...stateVariants(renderValue(example.valid.state)));
    example.valid.questions.forEach((q, i) => {
      const options = promptOptions(q);
      const pieces = [
        fieldHeader(i + 1, q.id, q.type),
        renderValue(effectiveInstructions(q)),
        ...options.map(
          ([id, description], j) => optionLabel(j + 1) + renderOptionSemantics(id, description),
        ),
      ];
      const key = pieces.join('\u0000');
      if (seenSchema.has(key)) return;
      seenSchema.add(key);
      // A schema counts as often as the template: its words become whole tokens.
      for (const piece of pieces) counted.push([piece, TEMPLATE_WEIGHT / 10]);
    });
  }
  return { texts, counted };
}

/** Each word WORD_WEIGHT times, as a state's variants would hold it and capitalised. */
function wordTexts(words: readonly string[]): string[] {
  const texts: string[] = [];
  for (const word of words) {
    const capital = word.charAt(0).toUpperCase() + word.slice(1);
    for (let n = 0; n < WORD_WEIGHT; n++) texts.push(word, ` ${word}`, capital, ` ${capital}`);
  }
  return texts;
}
/** How often an added word counts: as often as a common word of a small file. */
const WORD_WEIGHT = 20;

/** The prompt template's texts, each counted `weight` times. */
function templateCounts(weight: number): Array<readonly [string, number]> {
  const template = [PROMPT_PREFIX, SCHEMA_HEADER, ALLOWED_OPTIONS_HEADER, FIELD_END, PROMPT_SUFFIX];
  return template.map((text) => [text, weight] as const);
}

/**
 * A state as the tokenizer learns it: as written, lower-cased, and with a leading space. Byte-level
 * BPE tells "VPN", "vpn" and " vpn" apart; with all three in the corpus each is a whole token, and
 * the model ties them through their shared features (features.ts) instead of seeing a word that
 * starts a message, or is written in capitals, split into pieces.
 */
export function stateVariants(text: string): string[] {
  const lower = text.toLowerCase();
  const variants = [text, ` ${text}`];
  if (lower !== text) variants.push(lower, ` ${lower}`);
  return variants;
}

export interface PreparedData {
  tokenizer: ClefTokenizer;
  files: TrainedTokenizer;
  markers: { state: number; schema: number };
  /** The bag's template tokens besides the markers (they get no content and no weight). */
  template: number[];
}

/** Trains the byte-level BPE on the examples and finds the marker tokens the model keys on. */
export function prepareTokenizer(
  examples: readonly LabelledExample[],
  vocabSize: number,
  /** Words to keep whole besides the file's (the scope layer's cues and breaks). */
  words: readonly string[] = [],
): PreparedData {
  if (!Number.isInteger(vocabSize) || vocabSize < 512) {
    throw new TrainError(
      'train_options_invalid',
      `--vocab must be an integer >= 512, got ${vocabSize}`,
    );
  }
  const { texts, counted } = corpus(examples);
  texts.unshift(...wordTexts(words));
  const train = (templateWeight: number) => {
    const files = trainBpeTokenizer({
      vocabSize,
      corpus: texts,
      counted: [...templateCounts(templateWeight), ...counted],
      minPairCount: 1,
    });
    return { files, tokenizer: loadTokenizerSync(files.tokenizerJson, files.tokenizerConfig) };
  };
  const whole = (t: ClefTokenizer) => ['STATE', 'SCHEMA'].every((w) => t.encode(w).length === 1);
  let { files, tokenizer } = train(TEMPLATE_WEIGHT);
  // Where the file's own texts outweigh the template, the template counts as all of them.
  const all = counted.reduce((sum, [, times]) => sum + times, texts.length);
  if (!whole(tokenizer)) ({ files, tokenizer } = train(all));
  const single = (word: string): number => {
    const ids = tokenizer.encode(word);
    if (ids.length !== 1) {
      throw new TrainError(
        'train_options_invalid',
        `the tokenizer trained with --vocab ${vocabSize} splits the template word ${word} into ${ids.length} tokens: give a larger --vocab`,
      );
    }
    return ids[0] as number;
  };
  const markers = { state: single('STATE'), schema: single('SCHEMA') };
  // The prompt template fixes these two; a failure here is a bug, not bad input.
  const prefix = tokenizer.encode(PROMPT_PREFIX);
  if (prefix.filter((t) => t === markers.state).length !== 1 || prefix.includes(markers.schema)) {
    throw new Error('the prompt prefix must hold the STATE token once and no SCHEMA token');
  }
  if (!tokenizer.encode(SCHEMA_HEADER).includes(markers.schema)) {
    throw new Error('the schema header must hold the SCHEMA token');
  }
  return { tokenizer, files, markers, template: bagTemplate(tokenizer, markers) };
}

/**
 * The template tokens the bag holds besides the state's own: after the STATE marker in the
 * prompt's prefix ("STATE:\n" ends it) and before the SCHEMA marker in the schema header.
 */
function bagTemplate(tokenizer: ClefTokenizer, markers: { state: number; schema: number }) {
  const prefix = tokenizer.encode(PROMPT_PREFIX);
  const header = tokenizer.encode(SCHEMA_HEADER);
  return [
    ...prefix.slice(prefix.indexOf(markers.state) + 1),
    ...header.slice(0, header.indexOf(markers.schema)),
  ];
}

function span(ids: readonly number[], [start, end]: readonly [number, number]): Int32Array {
  return Int32Array.from(ids.slice(start, end));
}

/**
 * The example as the matcher sees it: the bag (from the first STATE token up to the first
 * SCHEMA token, as the constructed flag layer marks it) and each labelled question's option
 * spans. Requests over the context are refused with their line numbers.
 */
export function encodeExamples(
  examples: readonly LabelledExample[],
  data: PreparedData,
  contextTokens: number,
  trained: ReadonlySet<string>,
): ModelExample[] {
  const tooLong: string[] = [];
  const out: ModelExample[] = [];
  const spans = new Map<string, Int32Array>();
  for (const example of examples) {
    let encoded;
    try {
      encoded = encodeRequest(data.tokenizer, example.valid, { maxTokens: contextTokens });
    } catch (e) {
      tooLong.push(`  line ${example.line}: ${(e as Error).message}`);
      continue;
    }
    const ids = encoded.inputIds;
    const start = ids.indexOf(data.markers.state);
    const end = ids.indexOf(data.markers.schema);
    const stop = end < start ? start + 1 : end;
    const bag = Int32Array.from(ids.slice(start, stop));
    const questions = encoded.questions
      .map((q, k) => ({ q, valid: example.valid.questions[k] }))
      .filter(({ q }) => trained.has(q.id))
      .map(({ q }) => ({
        instructions: span(ids, q.span),
        options: q.optionSpans.map(([s, e]) => {
          const key = ids.slice(s, e).join(',');
          let span = spans.get(key);
          if (span === undefined) spans.set(key, (span = Int32Array.from(ids.slice(s, e))));
          return span;
        }),
        label: example.labels.get(q.id) ?? -1,
      }));
    const last = ids[ids.length - 1] as number;
    const before = Int32Array.from(ids.slice(Math.max(0, start - MAX_LAG), start));
    out.push({ bag, before, last, questions });
  }
  if (tooLong.length > 0) {
    throw new TrainError(
      'examples_too_long',
      `${tooLong.length} request${tooLong.length === 1 ? ' does' : 's do'} not fit the context of ${contextTokens} tokens (raise --context, or shorten them):\n${tooLong.slice(0, 50).join('\n')}`,
      { lines: tooLong.length },
    );
  }
  return out;
}
