/**
 * The guard between a package's graphs and the runner: a graph converted for another version
 * of the engine is refused, naming the file, instead of answering wrongly. A session must have
 * every input the runner feeds (checked when it is created), and a runtime that silently drops
 * a feed the graph has no input for (onnxruntime-node does) is made to refuse it.
 */
import { PackageError } from '../wire/errors.js';
import type { BackboneGroupSpec } from './graph-spec.js';
import type { SessionLike } from './runtime-types.js';

/** The inputs the runner feeds each head graph. */
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

/** The inputs the runner feeds one backbone graph: its stream in, and each state it carries. */
export function backboneInputs(group: Pick<BackboneGroupSpec, 'input' | 'states'>): string[] {
  return [group.input, ...group.states.map((s) => s.input)];
}

/**
 * The one guard on a graph's session, in the page and in Node: a session that lacks an input
 * the runner feeds (`required`) is refused now, and a feed the graph has no input for is
 * refused when run. A runtime may silently ignore an unknown feed (onnxruntime-node does), so
 * a package converted for another graph layout would otherwise answer wrongly, not fail.
 */
export function guardSession(
  session: SessionLike,
  file: string,
  required: readonly string[],
): SessionLike {
  const inputs = new Set(session.inputNames);
  const converted = 'the package was converted for another version of the engine; convert it again';
  const missing = required.filter((name) => !inputs.has(name));
  if (missing.length > 0) {
    throw new PackageError(`${file} has no input ${missing.join(', ')}: ${converted}`, { file });
  }
  return {
    inputNames: session.inputNames,
    outputNames: session.outputNames,
    run: (feeds) => {
      const unknown = Object.keys(feeds).filter((name) => !inputs.has(name));
      if (unknown.length > 0) {
        throw new PackageError(
          `${file} has no input ${unknown.join(', ')} (inputs: ${session.inputNames.join(', ')}): ${converted}`,
          { file },
        );
      }
      return session.run(feeds);
    },
    release: () => session.release(),
  };
}
