/**
 * What a training run reads, as people have it, turned into the pipeline's options: the
 * labelled-request JSONL, or a plain file (a text and a label per row, plain.ts) with its
 * question; either as text or as the file's bytes (decoded by encoding.ts, or refused). The CLI,
 * the library and the playground's train worker all come through here, so a file is refused
 * with the same message on every surface. Runtime-neutral (paths through ../host/paths.ts).
 */
import { basename } from '../host/paths.js';
import { promptOptions } from '../../clef/prompt.js';
import { trainingText, type TextEncodingName, decodeTrainingText } from './encoding.js';
import { TrainError } from './errors.js';
import type { TrainOptions, TrainProgress } from './options.js';
import { parse } from './prepare.js';
import { firstCopies, plainRepeatReport, repeatNotes, repeatReport } from './repeats.js';
import type { TeacherOptions, TeacherProgress } from './teacher-options.js';
import {
  DEFAULT_LABEL_COLUMN,
  detectPlainFormat,
  isLabelledRequestFile,
  labelCounts,
  labelledJsonl,
  readPlainRows,
  type PlainFormat,
  type PlainRow,
  type PlainSettings,
} from './plain.js';
import { questionFromLabels, readQuestion, type PlainQuestion } from './question.js';

/** A file's contents: its text, or its bytes (UTF-8, or UTF-16 with a byte-order mark). */
export type FileInput = string | Uint8Array;

/** trainDecisionModel's options: the pipeline's, with the input as a user has it. */
export interface TrainInput extends Omit<
  TrainOptions,
  'examples' | 'heldOutExamples' | 'onProgress'
> {
  /** Labelled System One requests, one `{"request", "labels"}` a line (calibrate's format). */
  examples?: FileInput;
  /** Held-out labelled requests from a file of their own, instead of a split. */
  heldOutExamples?: FileInput;
  /**
   * Or a plain file: CSV with a header (a text and a label column), or JSONL of
   * `{"text": ..., "label": ...}`. Requests are made from it with `question` and `name`.
   */
  texts?: FileInput;
  /**
   * The question the labels answer: one System One choice question (its id the label column's
   * name) or `{"<id>": {...}}`; as JSON text, bytes or a value. Default: a choice over the labels.
   */
  question?: FileInput | object;
  /** How `texts` is read (format, column names). */
  plain?: PlainSettings;
  /** The files' names for messages: the path as typed, or the picked file's name. */
  files?: { examples?: string; heldOut?: string; texts?: string; question?: string };
  /**
   * Node only: have a System One server label `texts` (labels in the file are not read), keep
   * its confident answers, and train on them (teacher.ts).
   */
  teacher?: Omit<TeacherOptions, 'dir'> & { dir?: string };
  /**
   * Node only: threads the fit runs on (default: the cores Node may use, at most 4); 1 fits in
   * the calling thread. The same bytes for any count (shards.ts).
   */
  threads?: number;
  onProgress?: (progress: TrainProgress | TeacherProgress) => void;
}

const NAMES = {
  examples: 'examples',
  heldOut: 'held-out examples',
  texts: 'texts',
  question: 'question',
};

function fileNames(input: TrainInput) {
  const given = Object.entries(input.files ?? {}).filter(([, v]) => v !== undefined);
  return { ...NAMES, ...Object.fromEntries(given) } as typeof NAMES;
}

/** The model name a plain file's requests use: `name`, else the output folder's name. */
export function plainModelName(input: Pick<TrainInput, 'name' | 'out'>): string {
  return input.name ?? (basename(input.out) || 'clef-trained');
}

function questionText(q: FileInput | object, file: string): string {
  if (typeof q === 'string') return q;
  if (q instanceof Uint8Array) return trainingText(q, file);
  return JSON.stringify(q);
}

/** A plain file's rows (labels required unless `labels` says otherwise) and its question. */
export function readPlainInput(
  input: Pick<TrainInput, 'texts' | 'question' | 'plain' | 'files'>,
  labels: 'required' | 'ignored' = 'required',
): { rows: PlainRow[]; columns: string[]; format: PlainFormat; question: PlainQuestion | null } {
  const names = fileNames(input as TrainInput);
  const text = trainingText(input.texts as FileInput, names.texts);
  const format = input.plain?.format ?? detectPlainFormat(names.texts, text);
  const id = input.plain?.labelColumn ?? DEFAULT_LABEL_COLUMN;
  let question: PlainQuestion | null = null;
  if (input.question !== undefined) {
    question = readQuestion(questionText(input.question, names.question), names.question, id);
  }
  // The label column: as given, else the question's id ({"route": {...}} reads column "route").
  const labelColumn = input.plain?.labelColumn ?? question?.id ?? id;
  const { rows, columns } = readPlainRows(
    text,
    names.texts,
    { ...input.plain, labelColumn, format },
    labels,
    question ?? undefined,
  );
  if (question === null && labels === 'required') {
    question = questionFromLabels(
      rows.map((r) => r.label as string),
      id,
      names.texts,
    );
  }
  return { rows, columns, format, question };
}

/**
 * The pipeline's options for `input`: bytes decoded (or refused), a plain file turned into
 * labelled requests. Throws TrainError before any work.
 */
export function resolveTrainInput(
  input: TrainInput,
  /** Rows already read and labelled (by the teacher), in place of reading `texts`. */
  labelled?: { rows: PlainRow[]; question: PlainQuestion },
): TrainOptions {
  const names = fileNames(input);
  const { examples, heldOutExamples, texts, question, plain, files, teacher, ...rest } = input;
  void files;
  void teacher;
  if ((examples === undefined) === (texts === undefined)) {
    throw new TrainError(
      'train_options_invalid',
      examples === undefined
        ? 'give the examples: a plain file of texts and labels (--texts) or labelled requests (--examples)'
        : 'give either --texts or --examples, not both',
    );
  }
  const heldOut =
    heldOutExamples === undefined ? undefined : trainingText(heldOutExamples, names.heldOut);
  if (examples !== undefined) {
    if (question !== undefined || plain !== undefined) {
      throw new TrainError(
        'train_options_invalid',
        '--question and the column options go with --texts; labelled requests carry their questions',
      );
    }
    return { ...rest, examples: trainingText(examples, names.examples), heldOutExamples: heldOut };
  }
  const read = labelled ?? readPlainInput({ texts, question, plain, files: input.files });
  const name = plainModelName(input);
  return {
    ...rest,
    name,
    examples: labelledJsonl(read.rows, read.question as PlainQuestion, name),
    heldOutExamples: heldOut,
  };
}

/** What the Train panel shows about a file before training. */
export interface InputSummary {
  kind: 'labelled' | 'plain';
  encoding: TextEncodingName;
  format: PlainFormat | 'labelled-jsonl';
  /** The plain file's columns (for the column pickers); [] for labelled requests. */
  columns: string[];
  examples: number;
  /** Examples per question and option, in first-seen order. */
  labels: Array<{ question: string; option: string; count: number }>;
  /** The plain file's question (its JSON, pretty), and whether it was made from the labels. */
  question: { id: string; json: string; generated: boolean } | null;
  /** What `train` will say of the lines that repeat (repeats.ts repeatNotes); [] where none do. */
  notes: string[];
}

/**
 * Reads a picked file the way a run would (the same checks, the same messages) and says what
 * it holds. `name` is the file's name (format by extension; messages name it).
 */
export function inspectTrainInput(
  bytes: Uint8Array,
  name: string,
  options: { question?: string; plain?: PlainSettings } = {},
): InputSummary {
  const decoded = decodeTrainingText(bytes, name);
  if (isLabelledRequestFile(decoded.text)) {
    const examples = parse(decoded.text, NAMES.examples);
    const counts = new Map<string, number>();
    for (const e of examples) {
      for (const q of e.valid.questions) {
        const index = e.labels.get(q.id);
        if (index === undefined) continue;
        const option = (promptOptions(q)[index] as [string, unknown])[0];
        const key = JSON.stringify([q.id, option]);
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    }
    return {
      kind: 'labelled',
      encoding: decoded.encoding,
      format: 'labelled-jsonl',
      columns: [],
      examples: examples.length,
      labels: [...counts].map(([key, count]) => {
        const [question, option] = JSON.parse(key) as [string, string];
        return { question, option, count };
      }),
      question: null,
      notes: repeatNotes(
        repeatReport(examples, firstCopies(examples), { train: examples, heldOut: [] }),
      ),
    };
  }
  const read = readPlainInput({
    texts: decoded.text,
    question: options.question,
    plain: options.plain,
    files: { texts: name },
  });
  const question = read.question as PlainQuestion;
  return {
    kind: 'plain',
    encoding: decoded.encoding,
    format: read.format,
    columns: read.columns,
    examples: read.rows.length,
    labels: [...labelCounts(read.rows)].map(([option, count]) => ({
      question: question.id,
      option,
      count,
    })),
    question: {
      id: question.id,
      json: JSON.stringify(JSON.parse(question.json), null, 2),
      generated: question.generated,
    },
    notes: repeatNotes(plainRepeatReport(read.rows, question.id)),
  };
}

/** What the page sends for a picked file: its bytes and name, the question and column settings. */
export interface PickedFile {
  bytes: Uint8Array;
  name: string;
  /** The question's JSON text (plain files); absent: a choice made from the labels. */
  question?: string;
  plain?: PlainSettings;
}

/** A picked file as trainDecisionModel's input: labelled requests or a plain file, by content. */
export function pickedInput(
  file: PickedFile,
): Pick<TrainInput, 'examples' | 'texts' | 'question' | 'plain' | 'files'> {
  const { text } = decodeTrainingText(file.bytes, file.name);
  if (isLabelledRequestFile(text)) return { examples: text, files: { examples: file.name } };
  return { texts: text, question: file.question, plain: file.plain, files: { texts: file.name } };
}
