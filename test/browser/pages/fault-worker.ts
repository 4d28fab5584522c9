// The instrumented engine worker with the test fault hooks installed first (see fault-hooks.ts).
import './fault-hooks.js';
import '../../support/instrumented-worker/instrumented.worker.js';
