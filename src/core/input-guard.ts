/**
 * The guard between a package's graphs and the runner: a graph converted for another version
 * of the engine is refused, naming the file, instead of answering wrongly. A session must have
 * every input the runner feeds (checked when it is created), and a runtime that silently drops
 * a feed the graph has no input for (onnxruntime-node does) is made to refuse it.
 */
import { PackageError } from '../wire/errors.js';
import type { SessionLike } from './runtime-types.js';

/** The inputs each graph must have for this runner (checked when sessions are created). */
export const REQUIRED_INPUTS = {
  headMemory: ['hidden', 'past_memory'],
  headDecide: [
    'memory',
    'hidden',
    'question_weights',
    'option_weights',
    'option_question',
    'question_type',
    'lex',
  ],
} as const;

/**
 * Refuses a session that lacks an input the runner feeds. A runtime may silently ignore an
 * unknown feed (onnxruntime-node does), so a package converted for another graph layout would
 * answer wrongly instead of failing.
 */
export function checkInputs(session: SessionLike, file: string, names: readonly string[]): void {
  const missing = names.filter((n) => !session.inputNames.includes(n));
  if (missing.length > 0) {
    throw new Error(
      `${file} has no input ${missing.join(', ')}: the package was converted by another clef-web version; convert it again`,
    );
  }
}

/**
 * onnxruntime-node ignores feeds the graph has no input for, so a package converted before a
 * graph gained an input (e.g. head_memory's past_memory) would run and answer wrongly. Refuse
 * instead, naming the file.
 */
export function strictFeeds(session: SessionLike, path: string): SessionLike {
  const inputs = new Set(session.inputNames);
  return {
    inputNames: session.inputNames,
    outputNames: session.outputNames,
    run: (feeds) => {
      const unknown = Object.keys(feeds).filter((name) => !inputs.has(name));
      if (unknown.length > 0) {
        throw new PackageError(
          `${path} has no input ${unknown.join(', ')} (inputs: ${session.inputNames.join(', ')}): ` +
            'the package was converted for another version of the engine; convert it again',
          { file: path },
        );
      }
      return session.run(feeds);
    },
    release: () => session.release(),
  };
}
