// The engine's worker seeing 4 cores (many-cores.ts), whose thread workers never start when it
// is named 'clef-web-stall' (stall-threads.ts).
import './many-cores.js';
import './stall-threads.js';
import '../../../workers/clef.worker.js';
