/**
 * The `<clef-decide>` entry: importing it (or loading dist/element/clef-decide.js with a script
 * tag) defines the elements. Exports the classes and the shared pieces for custom UIs.
 */
import './clef-decide/define.js';

export { defineClefDecide } from './clef-decide/define.js';
export { ClefDecide, type DecideState } from './clef-decide/clef-decide.js';
export {
  ClefChoice,
  ClefLevel,
  ClefNoul,
  ClefOption,
  ClefScore,
  questionsFromChildren,
} from './clef-decide/question-elements.js';
export {
  EngineRegistry,
  engineKey,
  sharedRegistry,
  type DeviceChoice,
  type EngineLease,
} from './clef-decide/engine-registry.js';
export {
  describeDecision,
  descriptionText,
  percent,
  renderAnswer,
  renderAnswers,
} from './clef-decide/answer-view.js';
export { answerStyles } from './clef-decide/clef-decide.styles.js';
export { progressPercent, progressText } from './clef-decide/progress-text.js';
export type {
  ClefDecisionDetail,
  ClefDecisionEvent,
  ClefErrorDetail,
  ClefErrorEvent,
  ClefProgressEvent,
} from './clef-decide/events.js';
export { createClef, type Clef, type ClefOptions } from '../client/clef.js';
