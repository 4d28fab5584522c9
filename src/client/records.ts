/**
 * Decision records in the page (docs/records.md): `createClef({ record })` and
 * `<clef-decide record>` build each record with src/core/record.ts's buildRecord and keep it in
 * this origin's IndexedDB (database `clef-web-records`), or hand it to the page's callback.
 * Nothing here touches the network: records never leave the browser unless the page sends them.
 */
import type { CalibrationAsk } from '../calibrate/index.js';
import {
  recordDecision,
  recordLine,
  type DecisionRecord,
  type RecordSource,
  type RecordSurface,
} from '../core/record.js';
import type { SystemOneResponse } from '../protocol/types.js';
import { EngineError } from '../wire/errors.js';
import type { DecisionWire } from '../wire/wire.js';
import type { HostInfo } from '../wire/telemetry.js';

export interface RecordOptions {
  /**
   * Where each record goes: 'indexeddb' (default; `clef.exportRecords()` reads them back as
   * JSONL) or a function the page gives, called with each record.
   */
  to?: 'indexeddb' | ((record: DecisionRecord) => void | Promise<void>);
  /** Keep only each request's SHA-256, not the request (it cannot be replayed then). */
  requestSha256Only?: boolean;
}

/** The IndexedDB database and store the records are kept in (this page's origin only). */
export const RECORDS_DB = 'clef-web-records';
const STORE = 'records';

function done<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

/**
 * One object store of an IndexedDB database (created at version 1): each call opens the
 * database, runs `work` in one transaction and resolves once the transaction has committed.
 */
export function indexedDbStore(name: string, store: string, parameters: IDBObjectStoreParameters) {
  return async function withStore<T>(
    mode: IDBTransactionMode,
    work: (store: IDBObjectStore) => IDBRequest<T>,
  ): Promise<T> {
    const open = indexedDB.open(name, 1);
    open.onupgradeneeded = () => {
      open.result.createObjectStore(store, parameters);
    };
    const db = await done(open);
    try {
      const tx = db.transaction(store, mode);
      const result = await done(work(tx.objectStore(store)));
      await new Promise<void>((resolve, reject) => {
        tx.oncomplete = () => resolve();
        tx.onerror = () => reject(tx.error);
        tx.onabort = () => reject(tx.error);
      });
      return result;
    } finally {
      db.close();
    }
  };
}

const withStore = indexedDbStore(RECORDS_DB, STORE, { autoIncrement: true });

/** Every record kept in IndexedDB, oldest first, as JSONL (one record a line). */
export async function storedRecordsJsonl(): Promise<string> {
  const all = await withStore('readonly', (s) => s.getAll() as IDBRequest<DecisionRecord[]>);
  return all.map((r) => `${recordLine(r)}\n`).join('');
}

/** What a record names of the engine that answered: its package, device and runtime. */
export type AnsweringEngine = Omit<RecordSource, 'surface' | 'url'>;

/**
 * The engine a record names, from its info (at load: the package and runtime stay as they
 * are for a loaded engine) and the device that ran the decision (a lost GPU moves it to WASM).
 */
export function answeringEngine(info: HostInfo, device: string = info.device): AnsweringEngine {
  return {
    model: info.model,
    manifestSha256: info.manifestSha256,
    calibrationSha256: info.calibrationSha256,
    device,
    runtime: info.loadMs.runtime?.build ?? 'onnxruntime-web',
  };
}

/** Records one local decision; null when recording is off. */
export type Recorder = (
  request: unknown,
  wire: DecisionWire,
  ask: CalibrationAsk | null,
  engine: AnsweringEngine,
) => Promise<void>;

export function checkRecordOptions(option: boolean | RecordOptions | undefined): void {
  if (option === undefined || typeof option === 'boolean') return;
  if (typeof option !== 'object' || option === null) {
    throw new TypeError(`record must be true, false or { to, requestSha256Only }`);
  }
  const { to } = option;
  if (to !== undefined && to !== 'indexeddb' && typeof to !== 'function') {
    throw new TypeError(`record.to must be 'indexeddb' or a function, not ${String(to)}`);
  }
}

/** The record of one decision made in this page (buildRecord with what the page knows). */
export async function pageRecord(
  surface: RecordSurface,
  request: unknown,
  wire: DecisionWire,
  ask: CalibrationAsk | null,
  engine: AnsweringEngine,
  requestSha256Only = false,
): Promise<DecisionRecord> {
  return recordDecision(
    { surface, ...engine },
    request,
    { ...wire, response: wire.response as SystemOneResponse },
    ask,
    requestSha256Only,
  );
}

export function pageRecorder(
  option: boolean | RecordOptions | undefined,
  surface: RecordSurface,
): Recorder | null {
  checkRecordOptions(option);
  if (option === undefined || option === false) return null;
  const opts: RecordOptions = option === true ? {} : option;
  const to = opts.to ?? 'indexeddb';
  return async (request, wire, ask, engine) => {
    const record = await pageRecord(surface, request, wire, ask, engine, opts.requestSha256Only);
    try {
      if (to === 'indexeddb') await withStore('readwrite', (s) => s.add(record));
      else await to(record);
    } catch (e) {
      // An answered decision is a recorded one: a record that cannot be kept fails the call.
      throw new EngineError(`The decision could not be recorded: ${String(e)}`);
    }
  };
}
