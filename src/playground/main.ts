/** The playground's entry (index.html loads it). */
import '../element/clef-decide/define.js';
import { answerStyles } from '../element/clef-decide/clef-decide.styles.js';
import { progressBarStyles } from '../element/clef-decide/progress-bar.js';
import { ClefPlayground } from './app.js';
import './playground.css';

// The answer views' and the progress bar's styles, shared with <clef-decide>, for the
// playground's light DOM.
for (const styles of [answerStyles, progressBarStyles]) {
  if (styles.styleSheet) {
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, styles.styleSheet];
  }
}
if (!customElements.get('clef-playground'))
  customElements.define('clef-playground', ClefPlayground);
