// The API report: each package entry's exact export list, read by the TypeScript checker (so a
// name that arrives through a re-export chain counts). A change to any entry's surface fails
// here until the list below is changed with it, which is when the change gets reviewed.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exportLists, packageEntries, reachedSources } from '../../../tools/api-report.js';

const ROOT = resolve(import.meta.dirname, '../../..');

/** Entry file -> its exports, sorted; types marked `type `. */
const REPORT: Record<string, string[]> = {
  'src/index.ts': [
    'AbortedError',
    'BUNDLED_MODEL_URL',
    'CalibrationError',
    'ClefError',
    'DeviceError',
    'DisposedError',
    'DownloadError',
    'EngineError',
    'IntegrityError',
    'ModelTooLargeError',
    'PackageError',
    'SystemOneError',
    'WorkerLostError',
    'createClef',
    'handleRoute',
    'registerSystemOneRoute',
    'type CalibrationAsk',
    'type Clef',
    'type ClefErrorCode',
    'type ClefOptions',
    'type DecideOptions',
    'type DecisionRecord',
    'type DecisionWire',
    'type EngineInfo',
    'type EscalatedResponse',
    'type LoadProgress',
    'type RemoteOptions',
    'type RouteBackend',
    'type SystemOneRequest',
    'type SystemOneResponse',
  ],
  'src/protocol-entry.ts': [
    'CLEF_FLASH_LIMITS',
    'SystemOneError',
    'buildResponse',
    'encodeRequest',
    'isSystemOneError',
    'parseRequestJson',
    'pythonRound',
    'renderValue',
    'serializeResponse',
    'softmaxF32',
    'type Answer',
    'type ChoiceAnswer',
    'type EncodeOptions',
    'type EncodedQuestion',
    'type EncodedRequest',
    'type ErrorBody',
    'type JsonValue',
    'type ModelCard',
    'type ModelLimits',
    'type NoulAnswer',
    'type Question',
    'type ScoreAnswer',
    'type SystemOneRequest',
    'type SystemOneResponse',
    'type TextTokenizer',
    'type Usage',
    'type ValidQuestion',
    'type ValidRequest',
    'type ValidateOptions',
    'type ValidationIssue',
    'validateRequest',
  ],
  'src/element/index.ts': [
    'ClefChoice',
    'ClefDecide',
    'ClefLevel',
    'ClefNoul',
    'ClefOption',
    'ClefScore',
    'EngineRegistry',
    'answerStyles',
    'createClef',
    'defineClefDecide',
    'describeDecision',
    'descriptionText',
    'engineKey',
    'percent',
    'progressPercent',
    'progressText',
    'questionsFromChildren',
    'renderAnswer',
    'renderAnswers',
    'sharedRegistry',
    'type Clef',
    'type ClefDecisionDetail',
    'type ClefDecisionEvent',
    'type ClefErrorDetail',
    'type ClefErrorEvent',
    'type ClefOptions',
    'type ClefProgressEvent',
    'type DecideState',
    'type DeviceChoice',
    'type EngineLease',
  ],
  'src/sw/index.ts': [
    'RELAY',
    'createSystemOneRoute',
    'matchesSystemOneRoute',
    'systemOneRoutePath',
    'type RelayReply',
    'type RelayRequest',
    'type SystemOneRoute',
    'type SystemOneRouteOptions',
  ],
  'src/vite/index.ts': [
    'CROSS_ORIGIN_ISOLATION_HEADERS',
    'cachingHeaders',
    'clefWeb',
    'default',
    'type ClefWebPluginOptions',
  ],
  'src/node/index.ts': [
    'MissingDependencyError',
    'ServeConfigError',
    'ORT_NODE_VERSION',
    'TrainError',
    'UnsupportedOpError',
    'bundledModelDir',
    'convertRelease',
    'decideFile',
    'isTrainError',
    'loadNodePackage',
    'main',
    'measureFidelity',
    'nodeEngineBackend',
    'readPackageManifest',
    'startServer',
    'trainDecisionModel',
    'type ConvertOptions',
    'type DecideFileOptions',
    'type DecideSummary',
    'type FidelityOptions',
    'type FidelityReport',
    'type NodeDecision',
    'type NodeEngine',
    'type NodeEngineOptions',
    'type RunningServer',
    'type ServeEngine',
    'type ServeOptions',
    'type TeacherOptions',
    'type TeacherProgress',
    'type TrainErrorCode',
    'type TrainInput',
    'type TrainOptions',
    'type TrainPhase',
    'type TrainProgress',
    'type TrainResult',
    'verifyPackageFiles',
  ],
};

describe('the API report', () => {
  const lists = exportLists(ROOT, Object.keys(REPORT));

  it('covers every entry package.json publishes', () => {
    expect(packageEntries(ROOT)).toEqual(Object.keys(REPORT).sort());
  });

  for (const entry of Object.keys(REPORT)) {
    it(`${entry} exports exactly the reviewed names`, () => {
      expect(lists[entry]).toEqual([...REPORT[entry]!].sort());
    });
  }

  it('keeps the package root small (at most 30 names)', () => {
    expect(lists['src/index.ts']!.length).toBeLessThanOrEqual(30);
  });

  it('entries name what they export: no `export *`', () => {
    for (const entry of Object.keys(REPORT)) {
      expect(readFileSync(resolve(ROOT, entry), 'utf8'), entry).not.toMatch(/export \*/);
    }
  });

  it('keeps test and measurement switches out of the public options', () => {
    const options = lists['src/index.ts']!;
    expect(options).not.toContain('createClefWithBuild');
    const clef = readFileSync(resolve(ROOT, 'src/client/clef.ts'), 'utf8');
    const publicOptions = /export interface ClefOptions \{([\s\S]*?)\n\}/.exec(clef)![1]!;
    expect(publicOptions).not.toMatch(/\bsimulate\?|\bwasmBuild\?|\bsharedWorker\?/);
    expect(publicOptions).toMatch(/\bshared\?: boolean/);
  });

  it("ships no test vocabulary: the sources of the published types never name the test worker's", () => {
    // The instrumented test worker's fault simulations and counters live in
    // test/support/instrumented-worker.
    const testWords =
      /\b(FaultSimulation|InstrumentOptions|createInstrumentedClef|simulateAfterRestart|stalledAt|gpuBuffers|gpuBufferBytes|wasmMemoryBytes)\b|\bsimulate\??:/;
    expect(testWords.test('  simulate?: FaultSimulation;')).toBe(true);
    expect(testWords.test('  gpuBuffers: number | null;')).toBe(true);
    const sources = reachedSources(ROOT, Object.keys(REPORT));
    expect(sources).toContain('src/wire/wire.ts');
    expect(sources).toContain('src/client/clef.ts');
    const named = sources.filter((f) => testWords.test(readFileSync(resolve(ROOT, f), 'utf8')));
    expect(named).toEqual([]);
  });
});
