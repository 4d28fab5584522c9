/** The playground's entry (index.html loads it). */
import '../element/clef-decide/define.js';
import { answerStyles } from '../element/clef-decide/clef-decide.styles.js';
import { ClefPlayground } from './app.js';
import './playground.css';

// The answer views' styles, shared with <clef-decide>, for the playground's light DOM.
if (answerStyles.styleSheet) {
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, answerStyles.styleSheet];
}
if (!customElements.get('clef-playground'))
  customElements.define('clef-playground', ClefPlayground);
