/** The decision log in IndexedDB: survives reloads, works offline. */
import type { LogEntry } from './log-format.js';
import { indexedDbStore } from '../client/records.js';

const DB_NAME = 'clef-playground';
const STORE = 'decisions';

const withStore = indexedDbStore(DB_NAME, STORE, { keyPath: 'id', autoIncrement: true });

export class DecisionLog {
  /** Stores an entry; resolves to its id. */
  async add(entry: LogEntry): Promise<number> {
    // The store assigns the id.
    const stored: LogEntry = { ...entry };
    delete stored.id;
    return (await withStore('readwrite', (s) => s.add(stored))) as number;
  }

  /** Every entry, oldest first. */
  async all(): Promise<LogEntry[]> {
    return withStore('readonly', (s) => s.getAll() as IDBRequest<LogEntry[]>);
  }

  async clear(): Promise<void> {
    await withStore('readwrite', (s) => s.clear());
  }
}
