/** The decision log in IndexedDB: survives reloads, works offline. */
import type { LogEntry } from './log-format.js';

const DB_NAME = 'clef-playground';
const STORE = 'decisions';

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

function openDb(): Promise<IDBDatabase> {
  const open = indexedDB.open(DB_NAME, 1);
  open.onupgradeneeded = () => {
    open.result.createObjectStore(STORE, { keyPath: 'id', autoIncrement: true });
  };
  return request(open);
}

async function withStore<T>(
  mode: IDBTransactionMode,
  work: (store: IDBObjectStore) => IDBRequest<T>,
): Promise<T> {
  const db = await openDb();
  try {
    const tx = db.transaction(STORE, mode);
    const result = await request(work(tx.objectStore(STORE)));
    await new Promise<void>((resolve, reject) => {
      tx.oncomplete = () => resolve();
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error);
    });
    return result;
  } finally {
    db.close();
  }
}

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
