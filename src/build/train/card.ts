/**
 * The trained package's model card (README.md) and the manifest's `training` section: which
 * questions and options the model was trained on (the only ones it answers with meaning), the
 * label counts, the held-out figures (accuracy, per-option recall, the confusions that matter),
 * the calibration's figures, and what the model does not know.
 */
import { baselineVerdict, CHANCE_LEVEL, formatP, logisticVerdict } from './baseline.js';
import { readFileSync, writeFileSync } from '../host/files.js';
import { join } from '../host/paths.js';
import type { LabelledExample } from '../../calibrate/examples.js';
import type { CalibrateRunResult } from '../../calibrate/run.js';
import { promptOptions } from '../../clef/prompt.js';
import type { TrainedQuestion } from './data.js';
import type { BaselineReport, Disagreements, ModelRight } from './baseline.js';
import type { FitPhase } from './fit.js';
import type { FitSettings } from './learner.js';
import { repeatNotes, type RepeatReport } from './repeats.js';
import { leavesCuesOut, type ScopeCues } from './scope.js';

export interface QuestionFigures {
  id: string;
  answered: number;
  accuracy: number;
  /** Per option: held-out examples labelled with it, and the share the model picked it for. */
  recall: Record<string, { n: number; recall: number }>;
  /** The most frequent mistakes: (label, picked, count), most first, at most 10. */
  confusions: Array<{ label: string; picked: string; count: number }>;
}

export interface HeldOutReport {
  questions: QuestionFigures[];
}

/** The option a question's logits pick (the first of equals), as its index in prompt order. */
function picked(row: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if ((row[i] as number) > (row[best] as number)) best = i;
  return best;
}

/** Whether the model answered right, from the same logits heldOutFigures judges. */
export function modelAnsweredRight(
  logitsByLine: ReadonlyMap<number, ReadonlyArray<ArrayLike<number>>>,
): ModelRight {
  return (questionId, e) => {
    const logits = logitsByLine.get(e.line);
    const k = e.valid.questions.findIndex((q) => q.id === questionId);
    const label = e.labels.get(questionId);
    if (logits === undefined || k < 0 || label === undefined) return undefined;
    return picked(logits[k] as ArrayLike<number>) === label;
  };
}

/** Held-out figures from the package's own logits (options in prompt order). */
export function heldOutFigures(
  heldOut: readonly LabelledExample[],
  logitsByLine: ReadonlyMap<number, ReadonlyArray<ArrayLike<number>>>,
  questions: readonly TrainedQuestion[],
): HeldOutReport {
  const figures = new Map<
    string,
    { right: number; n: number; per: Map<string, [number, number]>; conf: Map<string, number> }
  >();
  for (const q of questions) figures.set(q.id, { right: 0, n: 0, per: new Map(), conf: new Map() });
  for (const e of heldOut) {
    const logits = logitsByLine.get(e.line);
    if (logits === undefined) continue;
    e.valid.questions.forEach((q, k) => {
      const label = e.labels.get(q.id);
      const f = figures.get(q.id);
      if (label === undefined || f === undefined) return;
      const best = picked(logits[k] as ArrayLike<number>);
      const ids = promptOptions(q).map(([id]) => id);
      const want = ids[label] as string;
      const got = ids[best] as string;
      f.n++;
      const per = f.per.get(want) ?? [0, 0];
      per[1]++;
      if (best === label) {
        f.right++;
        per[0]++;
      } else {
        const key = `${want}\u0000${got}`;
        f.conf.set(key, (f.conf.get(key) ?? 0) + 1);
      }
      f.per.set(want, per);
    });
  }
  return {
    questions: questions.map((q) => {
      const f = figures.get(q.id) as NonNullable<ReturnType<typeof figures.get>>;
      const recall: QuestionFigures['recall'] = {};
      for (const option of q.options) {
        const [right, n] = f.per.get(option) ?? [0, 0];
        recall[option] = { n, recall: n === 0 ? NaN : right / n };
      }
      const confusions = [...f.conf.entries()]
        .map(([key, count]) => {
          const [label, picked] = key.split('\u0000') as [string, string];
          return { label, picked, count };
        })
        .sort((a, b) => b.count - a.count || (a.label < b.label ? -1 : 1))
        .slice(0, 10);
      return {
        id: q.id,
        answered: f.n,
        accuracy: f.n === 0 ? NaN : f.right / f.n,
        recall,
        confusions,
      };
    }),
  };
}

export interface CardFacts {
  name: string;
  questions: readonly TrainedQuestion[];
  examples: { train: number; heldOut: number };
  /** What the figures were measured on: the held-out part, or the training part out of fold. */
  evaluatedOn: 'held-out' | 'cross-fit';
  heldOut: HeldOutReport;
  baseline: BaselineReport;
  selection: FitPhase['selection'] & { settings: FitSettings };
  seed: number;
  shape: { heads: number; headDim: number; vocab: number; hidden: number; classDims: number };
  calibration: CalibrateRunResult | null;
  calibrationSkipped: string | null;
  maxPackageDeltaP: number;
  /** Held-out examples run through the package. */
  verified: number;
  /** The engine they ran on (the host's). */
  verifiedOn: string;
  /** Random requests the converter's fidelity pass compared with the float64 reference. */
  fidelityRequests: number;
  releaseDir: string;
  /** Lines whose states read the same (repeats.ts). */
  repeats: RepeatReport;
  /** Markdown appended to the card. */
  notes: string | null;
}

const pct = (x: number): string => (Number.isNaN(x) ? 'n/a' : `${(100 * x).toFixed(1)}%`);

/** The manifest's `training` section (engine.info() and the playground read it). */
export function trainingSection(facts: CardFacts) {
  return {
    method:
      'clef-web train: a linear model over word and character features, written into the Clef architecture',
    questions: facts.questions.map((q) => ({
      id: q.id,
      type: 'choice',
      options: q.options,
      ...(q.schema
        ? { instructions: q.schema.instructions, descriptions: q.schema.descriptions }
        : {}),
    })),
    examples: facts.examples,
    evaluatedOn: facts.evaluatedOn,
    heldOutAccuracy: Object.fromEntries(
      facts.heldOut.questions.map((q) => [q.id, round4(q.accuracy)]),
    ),
    baselineAccuracy: Object.fromEntries(
      facts.baseline.questions.map((q) => [q.id, round4(q.accuracy)]),
    ),
    logisticAccuracy: Object.fromEntries(
      facts.baseline.questions.map((q) => [q.id, round4(q.logistic?.accuracy ?? NaN)]),
    ),
    seed: facts.seed,
    note: 'Only these questions and options were trained; other questions, option ids or descriptions get answers that carry no information.',
  };
}

const round4 = (x: number): number | null =>
  Number.isFinite(x) ? Math.round(x * 1e4) / 1e4 : null;

export function modelCard(facts: CardFacts): string {
  const lines: string[] = [];
  const { shape } = facts;
  const bare = facts.selection.scopeCues != null && leavesCuesOut(facts.selection.scopeCues);
  const judgedOn =
    facts.evaluatedOn === 'cross-fit'
      ? `out of fold (${facts.selection.folds}-fold cross-fit: each example judged by a model fitted without it)`
      : 'on the held-out part';
  lines.push(
    `# ${facts.name}`,
    '',
    `A decision model trained by \`clef-web train\` on ${facts.examples.train} labelled examples${facts.examples.heldOut > 0 ? ` (${facts.examples.heldOut} more held out)` : ''}.`,
    `It is a Clef-layout model (a linear-attention layer that marks where the state is${facts.selection.scope ? ', the scope layer' : ''}${facts.selection.pointer ? ', the pointer' : facts.selection.order ? ', the order layer' : ''} and a full-attention layer that pools it; hidden ${shape.hidden}, vocabulary ${shape.vocab}) that answers System One requests through the same engine as Clef-flash: \`createClef({ model: '<this directory>/' })\`, \`clef-web serve <this directory>\`.`,
    '',
    `Every figure below was measured ${judgedOn}, never on text the model was fitted to.`,
    '',
    '## Did it earn its place?',
    '',
    "Against the two baselines a careful engineer tries first, fitted and judged on the same examples: multinomial naive Bayes on word counts, and logistic regression on word and word-pair counts (its strength chosen as the model's penalty was). A model earns its place 3 points or more above naive Bayes and at least level with logistic regression:",
    '',
    '| question | this model | naive Bayes | logistic regression | verdict |',
    '| --- | --- | --- | --- | --- |',
  );
  for (const q of facts.questions) {
    const m = facts.heldOut.questions.find((x) => x.id === q.id)?.accuracy ?? NaN;
    const b = facts.baseline.questions.find((x) => x.id === q.id);
    const nb = b?.accuracy ?? NaN;
    const lr = b?.logistic?.accuracy ?? NaN;
    const lrCell = b?.logistic === null ? 'not fitted' : pct(lr);
    lines.push(`| \`${q.id}\` | ${pct(m)} | ${pct(nb)} | ${lrCell} | ${verdict(m, nb, lr)} |`);
  }
  const chance = facts.baseline.questions.flatMap((q) => [
    ...(q.disagreements === undefined ? [] : [chanceLine(q.id, q.disagreements, 'naive Bayes')]),
    ...(q.logistic?.disagreements === undefined
      ? []
      : [chanceLine(q.id, q.logistic.disagreements, 'logistic regression')]),
  ]);
  if (chance.length > 0) lines.push('', ...chance);
  if (facts.baseline.logisticSkipped !== undefined)
    lines.push('', `Logistic regression was ${facts.baseline.logisticSkipped}`);
  const repeats = repeatNotes(facts.repeats);
  if (repeats.length > 0)
    lines.push('', '## Repeated lines', '', ...repeats.map((note) => `- ${note}`));
  lines.push(
    '',
    '## What it was trained to answer',
    '',
    'Only these questions and options. Ask them as the examples did (the same question ids, option ids and descriptions); any other question, option id or description gets an answer that carries no information.',
    '',
  );
  for (const q of facts.questions) {
    lines.push(`### \`${q.id}\` (choice, ${q.options.length} options)`, '');
    const f = facts.heldOut.questions.find((x) => x.id === q.id);
    lines.push(
      `Accuracy: **${pct(f?.accuracy ?? NaN)}** over ${f?.answered ?? 0} answers ${facts.evaluatedOn === 'cross-fit' ? 'out of fold' : 'held out'}.`,
      '',
    );
    lines.push(
      '| option | training examples | judged examples | recall |',
      '| --- | --- | --- | --- |',
    );
    for (const o of q.options) {
      const r = f?.recall[o];
      lines.push(`| \`${o}\` | ${q.counts[o] ?? 0} | ${r?.n ?? 0} | ${pct(r?.recall ?? NaN)} |`);
    }
    lines.push('');
    if (f !== undefined && f.confusions.length > 0) {
      lines.push(
        'Most frequent mistakes:',
        '',
        '| label | answered | count |',
        '| --- | --- | --- |',
      );
      for (const c of f.confusions) lines.push(`| \`${c.label}\` | \`${c.picked}\` | ${c.count} |`);
      lines.push('');
    }
  }
  lines.push('## Calibration', '');
  if (facts.calibration !== null) {
    lines.push(
      `Fitted on the model's answers ${facts.evaluatedOn === 'cross-fit' ? 'out of fold' : 'on the held-out part'} (\`calibration.json\`; ask for it with \`createClef({ calibration: true })\`).${facts.evaluatedOn === 'cross-fit' ? " Its temperature is not let below 1: the out-of-fold answers are the file's own lines, and a model sharpened on them was confidently wrong more often on text written apart (docs/training.md, §4)." : ''} The calibration holds out its own part of them for these figures:`,
      '',
      '| question type | answers (fit / measured) | temperature | ECE before | ECE after | accuracy | coverage | mean set size |',
      '| --- | --- | --- | --- | --- | --- | --- | --- |',
    );
    for (const r of facts.calibration.reports) {
      lines.push(
        `| ${r.type} | ${r.n.fit} / ${r.n.heldOut} | ${r.temperature.toFixed(3)} | ${r.before.ece.toFixed(4)} | ${r.after.ece.toFixed(4)} | ${pct(r.after.accuracy)} | ${pct(r.after.coverage)} | ${r.after.meanSetSize.toFixed(2)} |`,
      );
    }
    // On a small file the measured part is a few dozen answers: say how coarse its figures are,
    // and that its accuracy is not the model's (that one is over every answer, above).
    lines.push('');
    for (const r of facts.calibration.reports) {
      lines.push(
        `The ${r.type} figures are measured on the ${r.n.heldOut} answers the calibration held out of ${r.n.fit + r.n.heldOut}: one answer moves their accuracy and coverage by ${(100 / r.n.heldOut).toFixed(1)} points.`,
      );
    }
  } else lines.push(`Not calibrated: ${facts.calibrationSkipped ?? 'no held-out answers'}.`);
  lines.push(
    '',
    '## How it was made and checked',
    '',
    `- Fit: L-BFGS on the cross-entropy with an L2 penalty λ ${facts.selection.settings.lambda}, norm scale ${facts.selection.settings.normScale}, bias weight ${facts.selection.settings.bias}${facts.selection.order ? `, with the order layer (its penalty ${facts.selection.settings.pairLambda}·λ)` : facts.selection.scope ? `, with the scope layer (${cuesPhrase(facts.selection.scopeCues)})` : facts.selection.pointer ? '' : ', without the order layer'}${facts.selection.pointer ? `, with the pointer (its penalty ${facts.selection.settings.pairLambda}·λ)` : ''}${facts.selection.clauseWeight === null ? '' : `, with the clause weight ${facts.selection.clauseWeight}`} (${settingsOrigin(facts)}); seed ${facts.seed}.`,
    facts.fidelityRequests > 0
      ? `- The weights were written as a Clef release (\`${facts.releaseDir}\`) and converted by \`clef-web convert\`, whose fidelity pass compares the package with the float64 reference forward (manifest \`fidelity\`).`
      : `- The weights were written as a Clef release (\`${facts.releaseDir}\`) and converted by \`clef-web convert\`'s code, without its fidelity pass against the float64 reference (0 requests: a page cannot run it, and quick builds skip it); the check below is the one that stands.`,
    `- ${facts.verified} examples were then run through the package (${facts.verifiedOn}): its probabilities differ from the fitted function's by at most ${facts.maxPackageDeltaP.toExponential(2)}.`,
    '',
    '## What it does not know',
    '',
    facts.selection.scope && facts.selection.scopeCues?.startsWith('nominal') === true
      ? `- It reads the state as a tf-idf weighted bag of words and character n-grams, leaving out the words in the scope of a negation of a thing (from "not", "no", "without", "nothing", "instead", "rather" to the end of its clause: "not the database, the wifi is down" counts as "${bare ? '' : 'not, '}the wifi is down"${bare ? ': the negation words themselves are left out too' : ''}). A negated verb's words stay ("can't reach the vpn" counts the vpn), as does what comes before a cue ("email isn't the issue" counts email). Other word orders ("delete temp, keep prod" against "delete prod, keep temp") barely move it. Questions and instructions are not read: every trained question sees the same state.`
      : facts.selection.scope
        ? `- It reads the state as a tf-idf weighted bag of words and character n-grams, leaving out the words in the scope of a negation (from "not", "no", "never", "without", "instead", "rather" or a "n't" to the end of its clause: "don't archive the invoices, purge them" counts as "${bare ? '' : "don't, "}purge them"${bare ? ': the negation words themselves are left out too' : ''}). Other word orders ("delete temp, keep prod" against "delete prod, keep temp") barely move it. Questions and instructions are not read: every trained question sees the same state.`
        : facts.selection.order
          ? '- It reads the state as a tf-idf weighted bag of words and character n-grams, plus an order layer: each word also seen with the words before it (four memories of earlier words the fit found worth keeping, the word just before among them where that helped), so "delete temp, keep prod" and "delete prod, keep temp" can differ where the examples taught it. Orders and negations the examples never showed are guesses. Questions and instructions are not read: every trained question sees the same state.'
          : '- It reads the state as a tf-idf weighted bag of words and character n-grams: word order, negation and anything the examples never used barely move it (the scope and order layers were ' +
            (facts.selection.orderTried || facts.selection.scopeTried
              ? 'tried and did not help out of fold here'
              : 'not tried: `auto` tries them on files of up to 2,000 examples where the plain model misses more than 1% out of fold; `--order on` forces the order layer') +
            '). Questions and instructions are not read: every trained question sees the same state.' +
            (facts.selection.scopeTried
              ? '\n- So a message that names one option to set it aside ("not a return, the parcel never arrived") tends to get the option it names. If your messages do that, add a few lines that do it to the file: the scope layer, which leaves negated words out, is kept where they show it helps (docs/training.md, §4).'
              : ''),
    ...(facts.selection.pointer
      ? [
          '- It also has the pointer: at each word it carries the evidence of the last thing named before it in its clause, with a weight and a sign the fit learned for that word, so "the vpn is fine, email is down" and "email is fine, the vpn is down" can differ where the examples used such words ("fine", "down"); what a word the examples never used carries is a guess from the words it looks like.',
        ]
      : []),
    ...(facts.selection.clauseWeight !== null
      ? [
          `- In a state of more than one clause, the words after its first break (a comma, a dash, "but", "while", …) weigh e^${facts.selection.clauseWeight} = ${Math.exp(facts.selection.clauseWeight).toFixed(2)} times as much as those before it, as the examples taught out of fold: where a request says what changed ("it was down this morning, it works now"), the later clause tends to say what holds. Where the first clause is the one that counts ("payments are offline, the internal wiki works"), that lean is wrong: the later clause's words weigh more whatever thing they name.`,
        ]
      : []),
    '- It answers only the trained questions and options (above, and in `manifest.json` under `training`).',
    '- Texts unlike the training examples (another language, another domain) get confident-looking answers that mean little; calibration and abstention (`calibration.json`) are the guard.',
    '',
  );
  if (facts.notes !== null) lines.push(facts.notes.trimEnd(), '');
  return lines.join('\n');
}

/** The scope layer's cues, in the card's words. */
function cuesPhrase(cues: ScopeCues | null): string {
  const which = cues?.startsWith('nominal') === true ? 'the cues that negate a thing' : 'every cue';
  return cues !== null && leavesCuesOut(cues)
    ? `${which}, the cues themselves left out too`
    : which;
}

/** The card's plain statement of whether the model beat the baselines. */
function verdict(model: number, naiveBayes: number, logistic: number): string {
  const behind = logisticVerdict(model, logistic) === 'behind';
  const help = 'more examples, or descriptions that say what each option means, may help';
  return {
    earned: behind
      ? `3 points or more above naive Bayes, but **logistic regression is better here**: ${help}`
      : 'earned its place',
    level: `level with naive Bayes (within 3 points)${behind ? '; **logistic regression is better here**' : ''}`,
    worse: `**naive Bayes is better here**${behind ? ', and logistic regression too' : ''}: ${help}`,
    unmeasured: 'not measured',
  }[baselineVerdict(model, naiveBayes)];
}

/**
 * How far chance explains the difference: on a small file a few lines either way turn a verdict.
 */
function chanceLine(id: string, d: Disagreements, baseline: string): string {
  const n = d.modelOnly + d.baselineOnly;
  if (n === 0) return `- \`${id}\`: this model and ${baseline} got the same lines right.`;
  const reading = d.p < CHANCE_LEVEL ? 'unlikely to be chance' : 'the difference could be chance';
  return `- \`${id}\`: on the ${n === 1 ? 'one line' : `${n} lines`} where this model and ${baseline} disagree, this model was right on ${d.modelOnly} and ${baseline} on ${d.baselineOnly}. Were neither better, a split at least this uneven would come with probability ${formatP(d.p)} (exact sign test): ${reading}.`;
}

function settingsOrigin(facts: CardFacts): string {
  const s = facts.selection;
  if (s.method === 'given') return 'as given';
  const list = s.scores
    .map(
      (c) =>
        `λ ${c.settings.lambda} / ${c.settings.normScale} / ${c.settings.bias}${c.layer === undefined ? '' : ` with the ${c.layer} layer`}${c.clauseWeight === undefined ? '' : `, clause weight ${c.clauseWeight}`}${c.folds === undefined ? '' : ` (on ${c.folds} fold)`}: ${c.logLoss.toFixed(3)}`,
    )
    .join('; ');
  return s.method === 'cross-fit'
    ? `chosen by ${s.folds}-fold cross-fit out-of-fold cross-entropy: ${list}`
    : `chosen by held-out cross-entropy: ${list}`;
}

/** Writes README.md and adds the `training` section to the manifest. */
export function writeModelCard(dir: string, facts: CardFacts): void {
  writeFileSync(join(dir, 'README.md'), modelCard(facts));
  const path = join(dir, 'manifest.json');
  const manifest = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  manifest.training = trainingSection(facts);
  writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`);
}
