// Imported first by clef.worker.ts: ES modules evaluate in import order, so the wrappers are in
// place before onnxruntime-web is loaded.
import { installResourceCounters } from '../src/engine/resource-counters.js';

installResourceCounters();
