/**
 * Registers `<clef-decide>` and its declarative children. Guarded: a page that includes the
 * script twice (or two copies of it) keeps the first definitions and loads no second engine
 * (engines are shared through a page-wide registry, see engine-registry.ts).
 */
import { ClefDecide } from './clef-decide.js';
import { ClefChoice, ClefLevel, ClefNoul, ClefOption, ClefScore } from './question-elements.js';

const ELEMENTS: Array<[string, CustomElementConstructor]> = [
  ['clef-choice', ClefChoice],
  ['clef-option', ClefOption],
  ['clef-noul', ClefNoul],
  ['clef-score', ClefScore],
  ['clef-level', ClefLevel],
  // Last: when it upgrades, the children above are already defined.
  ['clef-decide', ClefDecide],
];

export function defineClefDecide(): void {
  for (const [name, constructor] of ELEMENTS) {
    if (!customElements.get(name)) customElements.define(name, constructor);
  }
}

defineClefDecide();
