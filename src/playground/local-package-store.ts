/**
 * Where the playground keeps the directory handles of package folders picked on this computer:
 * one IndexedDB store, read by the page (local-package.ts) and by the service worker that
 * serves the folders' files (public/sw.js, through this file bundled into
 * public/sw-local-packages.js by tools/sw/build-routes.mjs), so both open the same database.
 */

const DB_NAME = 'clef-local-packages';
const STORE = 'handles';

/** The URL path the service worker serves a picked folder's files under: `<prefix><id>/...`. */
export const LOCAL_PACKAGES_PATH = '/local-packages/';

export interface StoredHandle {
  id: string;
  name: string;
  added: number;
  handle: FileSystemDirectoryHandle;
}

export function done<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

/** The handles' store, `mode` as asked, and its database (close it when done). */
export async function openHandles(
  mode: IDBTransactionMode,
): Promise<{ db: IDBDatabase; store: IDBObjectStore }> {
  const open = indexedDB.open(DB_NAME, 1);
  // Whichever of the page and the service worker opens it first creates the store.
  open.onupgradeneeded = () => open.result.createObjectStore(STORE, { keyPath: 'id' });
  const db = await done(open);
  return { db, store: db.transaction(STORE, mode).objectStore(STORE) };
}

/** The directory handle stored under `id`, or undefined. */
export async function storedDirectory(id: string): Promise<FileSystemDirectoryHandle | undefined> {
  const { db, store } = await openHandles('readonly');
  try {
    return ((await done(store.get(id))) as StoredHandle | undefined)?.handle;
  } finally {
    db.close();
  }
}
