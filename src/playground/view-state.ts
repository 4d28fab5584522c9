/**
 * What the playground's views read and call: the app's state and actions, as an interface so
 * the view-*.ts files receive it as an argument and never import app.ts back.
 */
import type { Clef } from '../client/clef.js';
import type { ClefErrorDetail } from '../element/clef-decide/events.js';
import type { UntrainedPart } from '../core/untrained.js';
import type { SystemOneResponse } from '../protocol/types.js';
import type { DeviceRequest } from '../wire/devices.js';
import type { LoadProgress } from '../wire/wire.js';
import type { DecisionTimings, EngineInfo } from '../wire/telemetry.js';
import type { LogEntry } from './log-format.js';
import type { FormState } from './request-form.js';
import type { OfflineStatus } from './sw-client.js';
import type { PromptView } from './token-view.js';

export type Source = 'default' | 'url' | 'folder';
/** The device select's value: 'auto' or a device of the engine's list (src/core/devices.ts). */
export type Device = DeviceRequest;

export interface DecisionResult {
  requestText: string;
  response: SystemOneResponse;
  json: string;
  timings: DecisionTimings;
  /** What the request asked that the model was not trained on (DecisionWire.untrained). */
  untrained?: UntrainedPart[];
}

export interface PlaygroundView {
  source: Source;
  url: string;
  device: Device;
  folder: FileSystemDirectoryHandle | null;
  loading: boolean;
  progress: LoadProgress | null;
  loadError: ClefErrorDetail | null;
  info: EngineInfo | null;
  form: FormState;
  editMode: 'form' | 'raw';
  rawText: string;
  rawNote: string | null;
  deciding: boolean;
  result: DecisionResult | null;
  decideError: ClefErrorDetail | null;
  prompt: PromptView | null;
  promptError: string | null;
  log: LogEntry[];
  offline: OfflineStatus;
  jsonTab: 'request' | 'response';
  readonly clef: Clef | null;
  loadModel(): Promise<void>;
  pickFolder(): Promise<void>;
  loadFromDirectory(dir: FileSystemDirectoryHandle): Promise<void>;
  /** Loads a model trained in the Train panel and puts its trained questions in the form. */
  useTrainedModel(dir: FileSystemDirectoryHandle): Promise<void>;
  decide(): Promise<void>;
  setForm(form: FormState): void;
  applyPreset(id: string): void;
  setEditMode(mode: 'form' | 'raw'): void;
  setRawText(text: string): void;
  restore(entry: LogEntry): void;
  clearLog(): Promise<void>;
  exportLog(): void;
}
