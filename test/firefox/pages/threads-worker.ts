// The engine's worker seeing 4 cores (many-cores.ts): its WASM runs on 3 threads.
import './many-cores.js';
import '../../../workers/clef.worker.js';
