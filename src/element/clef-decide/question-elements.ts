/**
 * Declarative questions for `<clef-decide>`: light-DOM children that only carry data. They are
 * never rendered (the element's shadow root has no default slot) and the element watches them
 * with a MutationObserver, so editing them re-decides.
 *
 * ```html
 * <clef-choice name="route" instructions="Which team should handle this?">
 *   <clef-option value="billing">Money problems</clef-option>
 *   <clef-option value="other"></clef-option>
 * </clef-choice>
 * <clef-noul name="urgent" instructions="Does it need an answer today?"></clef-noul>
 * <clef-score name="severity"><clef-level>low</clef-level><clef-level>high</clef-level></clef-score>
 * ```
 *
 * Reading works on plain elements too (attributes and text only), so questions declared before
 * the script defines these classes are read the same way.
 */
import type { Description, Question } from '../../protocol/types.js';

/** An element's text as a description: trimmed, empty meaning "no description" (null). */
function textDescription(el: Element): Description {
  const trimmed = (el.textContent ?? '').trim();
  return trimmed === '' ? null : trimmed;
}

/**
 * `{ instructions }` from the attribute, or nothing: a missing key lets the question id stand
 * in (the contract's rule), while a key holding `undefined` would be refused as not JSON.
 */
function instructionsOf(el: Element): { instructions?: string } {
  const instructions = el.getAttribute('instructions');
  return instructions === null ? {} : { instructions };
}

function choiceQuestionOf(el: Element): Question {
  const criteria: Record<string, Description> = {};
  for (const option of el.querySelectorAll(':scope > clef-option')) {
    criteria[option.getAttribute('value') ?? ''] = textDescription(option);
  }
  return { type: 'choice', ...instructionsOf(el), criteria };
}

function noulQuestionOf(el: Element): Question {
  const yes = el.getAttribute('yes');
  const no = el.getAttribute('no');
  if (yes === null && no === null) return { type: 'noul', ...instructionsOf(el) };
  const criteria: { true?: Description; false?: Description } = {};
  if (yes !== null) criteria.true = yes;
  if (no !== null) criteria.false = no;
  return { type: 'noul', ...instructionsOf(el), criteria };
}

function scoreQuestionOf(el: Element): Question {
  const levels = [...el.querySelectorAll(':scope > clef-level')].map(textDescription);
  return { type: 'score', ...instructionsOf(el), criteria: levels };
}

const READERS: Record<string, (el: Element) => Question> = {
  'clef-choice': choiceQuestionOf,
  'clef-noul': noulQuestionOf,
  'clef-score': scoreQuestionOf,
};

/**
 * The questions declared by `host`'s direct children, in document order; null when there are
 * none. A child without a `name` gets the id "" and the request is refused with a 422 that
 * says so, rather than being dropped silently.
 */
export function questionsFromChildren(host: Element): Record<string, Question> | null {
  const questions: Record<string, Question> = {};
  let found = false;
  for (const child of host.children) {
    const read = READERS[child.localName];
    if (!read) continue;
    found = true;
    questions[child.getAttribute('name') ?? ''] = read(child);
  }
  return found ? questions : null;
}

/** Base for the data-only children: hidden wherever they are placed. */
class ClefDataElement extends HTMLElement {
  connectedCallback(): void {
    // Outside a <clef-decide> nothing hides them; their text must never show on the page.
    this.hidden = true;
  }
}

/**
 * A choice question; its options are the `<clef-option>` children.
 * @attr name - question id
 * @attr instructions - what the model is asked (default: the id)
 */
export class ClefChoice extends ClefDataElement {
  toQuestion(): Question {
    return choiceQuestionOf(this);
  }
}

/**
 * One option of a `<clef-choice>`; its text is the option's description.
 * @attr value - the option id the answer names
 */
export class ClefOption extends ClefDataElement {}

/**
 * A yes/no question; the answer is P(yes).
 * @attr name - question id
 * @attr instructions - the proposition or question
 * @attr yes - optional description of "true"
 * @attr no - optional description of "false"
 */
export class ClefNoul extends ClefDataElement {
  toQuestion(): Question {
    return noulQuestionOf(this);
  }
}

/**
 * A score question; its `<clef-level>` children are the rubric, level 0 first.
 * @attr name - question id
 * @attr instructions - what is graded
 */
export class ClefScore extends ClefDataElement {
  toQuestion(): Question {
    return scoreQuestionOf(this);
  }
}

/** One level of a `<clef-score>` rubric; its text describes the level. */
export class ClefLevel extends ClefDataElement {}

declare global {
  interface HTMLElementTagNameMap {
    'clef-choice': ClefChoice;
    'clef-option': ClefOption;
    'clef-noul': ClefNoul;
    'clef-score': ClefScore;
    'clef-level': ClefLevel;
  }
}
