/**
 * `clef-web/element/react`: JSX typings for `<clef-decide>` and its children in React (17, 18
 * and 19 types, `jsx: react-jsx` or `react`). Types only; it imports nothing at run time.
 *
 * ```ts
 * import 'clef-web/element'; // defines the elements (in a client component)
 * import type {} from 'clef-web/element/react'; // once, anywhere in the program
 * ```
 *
 * Attributes are the elements' HTML attributes (strings), as React passes them to a custom
 * element; listen to `clef-decision` with a ref (`addEventListener`), since React's JSX has no
 * typed prop for custom events.
 */
import type { DetailedHTMLProps, HTMLAttributes } from 'react';
import type {
  ClefChoice,
  ClefDecide,
  ClefLevel,
  ClefNoul,
  ClefOption,
  ClefScore,
} from 'clef-web/element';

type Props<E, A> = DetailedHTMLProps<HTMLAttributes<E>, E> & A;

/** `<clef-decide>`'s attributes (docs/element.md). */
export interface ClefDecideAttributes {
  model?: string;
  'model-name'?: string;
  device?: 'auto' | 'webgpu' | 'wasm';
  state?: string;
  for?: string;
  debounce?: number | string;
  label?: string;
  calibrated?: boolean | '';
  'abstain-below'?: number | string;
  record?: boolean | '';
  shared?: boolean | '';
}

export interface ClefQuestionAttributes {
  name: string;
  instructions?: string;
}

export interface ClefIntrinsicElements {
  'clef-decide': Props<ClefDecide, ClefDecideAttributes>;
  'clef-choice': Props<ClefChoice, ClefQuestionAttributes>;
  'clef-option': Props<ClefOption, { value: string }>;
  'clef-noul': Props<ClefNoul, ClefQuestionAttributes & { yes?: string; no?: string }>;
  'clef-score': Props<ClefScore, ClefQuestionAttributes>;
  'clef-level': Props<ClefLevel, object>;
}

declare module 'react' {
  namespace JSX {
    // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- merged into React's
    interface IntrinsicElements extends ClefIntrinsicElements {}
  }
}
