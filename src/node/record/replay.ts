/**
 * `npx clef-web replay <records.jsonl> [--package <dir>]` (default: the bundled clef-nano)
 *
 * Re-runs each decision record (docs/records.md) on the package and says, per record:
 * identical, different (the largest |Δp| and the questions whose choice changed), or not
 * reproducible (recorded by another model, package or calibration — which — or without its
 * request). Exit 0 only when every record is identical, so it can gate a model upgrade in CI.
 * A torn last line (a crash mid-write) is reported and skipped; a bad line elsewhere fails.
 */
import { errorText, numberOption, parseCommandArgs } from '../cli-args.js';
import { calibrationSha256 } from '../../core/calibration.js';
import { parseRecord, type DecisionRecord } from '../../core/record.js';
import { readLines } from '../decide/jsonl.js';
import type { NodeEngine } from '../engine.js';
import { RUNTIME_USAGE, runtimeOption, type NodeRuntimeRequest } from '../node-runtime.js';
import {
  compareDecision,
  unreproducibleReason,
  type ReplayPackage,
  type Verdict,
} from './compare.js';

export const REPLAY_USAGE = `usage: clef-web replay <records.jsonl> [--package <dir>]
  [--package <dir>]  the package to replay on (default: the bundled clef-nano)
  [--tolerance P]    also pass a record whose probabilities moved by at most P and whose picks did
                     not change (another runtime: a browser's record replayed in Node); default 0
  [--quiet]          print only the summary and the records that are not identical
  ${RUNTIME_USAGE}
exit 0 only when every record replays identical; 1 otherwise; 2 for a usage error`;

export interface ReplaySummary {
  identical: number;
  /** Different, but within --tolerance and with no pick changed (counted as passing). */
  withinTolerance: number;
  different: number;
  notReproducible: number;
  /** Lines that are not records (not the torn last line). */
  unreadable: number;
  /** A torn last line: its line number, or null. */
  tornLastLine: number | null;
}

type LineVerdict =
  | Verdict
  | { kind: 'unreadable'; reason: string }
  | { kind: 'within-tolerance'; maxDeltaP: number };

/** The engine part replay uses (a NodeEngine, or a test's). */
export type ReplayEngine = Pick<NodeEngine, 'decide' | 'manifest' | 'manifestSha256'>;

async function replayOne(record: DecisionRecord, engine: ReplayEngine): Promise<LineVerdict> {
  const pkg: ReplayPackage = {
    model: engine.manifest.model.name,
    manifestSha256: engine.manifestSha256,
    calibrationSha256: calibrationSha256(engine.manifest),
  };
  const reason = unreproducibleReason(record, pkg);
  if (reason !== null) return { kind: 'not-reproducible', reason };
  const t = record.thresholds;
  const calibration =
    t === null ? undefined : t.abstain_below === null ? {} : { abstainBelow: t.abstain_below };
  try {
    const now = await engine.decide(record.request, calibration ? { calibration } : {});
    return compareDecision(record, now);
  } catch (e) {
    return { kind: 'different', maxDeltaP: NaN, changed: [`refused now: ${(e as Error).message}`] };
  }
}

function verdictText(v: LineVerdict): string {
  switch (v.kind) {
    case 'identical':
      return 'identical';
    case 'different': {
      const dp = Number.isNaN(v.maxDeltaP) ? '' : `max |Δp| ${v.maxDeltaP.toExponential(2)}`;
      const ch = v.changed.length > 0 ? `changed: ${v.changed.join(', ')}` : 'no choice changed';
      return `different: ${[dp, ch].filter((s) => s !== '').join('; ')}`;
    }
    case 'within-tolerance':
      return `within tolerance: max |Δp| ${v.maxDeltaP.toExponential(2)}, no pick changed`;
    case 'not-reproducible':
      return `not reproducible: ${v.reason}`;
    case 'unreadable':
      return `unreadable: ${v.reason}`;
  }
}

/** Replays every record of `path`; `print` gets one line per record (and the torn line). */
export async function replayFile(
  path: string,
  engine: ReplayEngine,
  print: (line: string, identical: boolean) => void,
  tolerance = 0,
): Promise<ReplaySummary> {
  const summary: ReplaySummary = {
    identical: 0,
    withinTolerance: 0,
    different: 0,
    notReproducible: 0,
    unreadable: 0,
    tornLastLine: null,
  };
  // One line held back: whether a bad line is the last one is known only at the next.
  let held: { n: number; text: string } | null = null;
  const settle = async (line: { n: number; text: string }, isLast: boolean) => {
    let record: DecisionRecord;
    try {
      record = parseRecord(line.text);
    } catch (e) {
      let json = true;
      try {
        JSON.parse(line.text);
      } catch {
        json = false;
      }
      if (isLast && !json) {
        summary.tornLastLine = line.n;
        print(`line ${line.n}: torn last line (a write cut short), skipped`, true);
        return;
      }
      summary.unreadable++;
      print(
        `line ${line.n}: ${verdictText({ kind: 'unreadable', reason: (e as Error).message })}`,
        false,
      );
      return;
    }
    let v: LineVerdict = await replayOne(record, engine);
    if (v.kind === 'different' && v.changed.length === 0 && v.maxDeltaP <= tolerance) {
      v = { kind: 'within-tolerance', maxDeltaP: v.maxDeltaP };
    }
    if (v.kind === 'identical') summary.identical++;
    else if (v.kind === 'within-tolerance') summary.withinTolerance++;
    else if (v.kind === 'different') summary.different++;
    else if (v.kind === 'not-reproducible') summary.notReproducible++;
    print(
      `line ${line.n}: ${verdictText(v)}`,
      v.kind === 'identical' || v.kind === 'within-tolerance',
    );
  };
  let n = 0;
  for await (const text of readLines(path)) {
    n++;
    if (text.trim() === '') continue;
    if (held) await settle(held, false);
    held = { n, text };
  }
  if (held) await settle(held, true);
  return summary;
}

export function replaySummaryText(s: ReplaySummary): string {
  const total = s.identical + s.withinTolerance + s.different + s.notReproducible;
  const parts = [
    `${s.identical} identical`,
    ...(s.withinTolerance > 0 ? [`${s.withinTolerance} within tolerance`] : []),
    `${s.different} different`,
    `${s.notReproducible} not reproducible`,
    ...(s.unreadable > 0 ? [`${s.unreadable} unreadable line(s)`] : []),
  ];
  const torn = s.tornLastLine !== null ? `; line ${s.tornLastLine} was torn and skipped` : '';
  return `replayed ${total} record(s): ${parts.join(', ')}${torn}`;
}

/** 0 only when there were records and every one is identical. */
export function replayExitCode(s: ReplaySummary): number {
  const ok =
    s.identical + s.withinTolerance > 0 && s.different + s.notReproducible + s.unreadable === 0;
  return ok ? 0 : 1;
}

export async function replayMain(argv: string[]): Promise<number> {
  let values;
  let positionals;
  let runtime: NodeRuntimeRequest;
  let tolerance: number;
  try {
    ({ values, positionals } = parseCommandArgs(argv, {
      package: { type: 'string' },
      quiet: { type: 'boolean' },
      tolerance: { type: 'string' },
      runtime: { type: 'string' },
    }));
    runtime = runtimeOption(values.runtime);
    if (positionals.length !== 1) throw new Error('give one records file');
    tolerance =
      numberOption(
        'tolerance',
        values.tolerance,
        { min: 0, max: 1 },
        () => '--tolerance must be a number in [0, 1]',
      ) ?? 0;
    if (values.package === '') throw new Error('--package needs a directory');
  } catch (e) {
    console.error(`clef-web replay: ${(e as Error).message}\n${REPLAY_USAGE}`);
    return 2;
  }
  const file = positionals[0] as string;
  const { stat } = await import('node:fs/promises');
  if (
    !(await stat(file).then(
      (s) => s.isFile(),
      () => false,
    ))
  ) {
    console.error(`clef-web replay: ${file}: no such file`);
    return 2;
  }
  const { loadNodePackage } = await import('../engine.js');
  let engine;
  try {
    const dir = values.package ?? (await import('../bundled.js')).bundledModelDir();
    engine = await loadNodePackage(dir, { runtime });
  } catch (e) {
    console.error(`clef-web replay: ${errorText(e)}`);
    return 1;
  }
  try {
    const quiet = values.quiet === true;
    const summary = await replayFile(
      file,
      engine,
      (line, identical) => {
        if (!quiet || !identical) console.log(line);
      },
      tolerance,
    );
    console.log(replaySummaryText(summary));
    if (
      summary.identical + summary.withinTolerance + summary.different + summary.notReproducible ===
      0
    ) {
      console.log('no records to replay');
    }
    return replayExitCode(summary);
  } finally {
    await engine.dispose();
  }
}
