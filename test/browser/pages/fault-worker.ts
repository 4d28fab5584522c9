// The engine's worker with the test fault hooks installed first (see fault-hooks.ts).
import './fault-hooks.js';
import '../../../workers/clef.worker.js';
