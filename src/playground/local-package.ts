/**
 * Loading a model package from a folder on this computer, without hosting it: the page keeps
 * the folder's directory handle in IndexedDB, and the service worker (public/sw.js) serves its
 * files under `/local-packages/<id>/`, so the engine loads it like any package URL, reading
 * each file from disk when it asks for it (nothing is copied).
 *
 * It needs the service worker to control the page and its workers. A cleaner way, once the
 * engine can take one, would be to hand the engine the directory handle itself (see the
 * playground report): then no service worker would be involved.
 */

import {
  done,
  LOCAL_PACKAGES_PATH,
  openHandles,
  type StoredHandle,
} from './local-package-store.js';

/** Handles kept: the newest few, so going back to a recent folder works. */
const KEEP = 5;

export class LocalPackageError extends Error {
  override get name(): string {
    return 'LocalPackageError';
  }
}

async function remember(entry: StoredHandle): Promise<void> {
  const { db, store } = await openHandles('readwrite');
  try {
    const all = (await done(store.getAll())) as StoredHandle[];
    const old = all.sort((a, b) => b.added - a.added).slice(KEEP - 1);
    for (const e of old) store.delete(e.id);
    await done(store.put(entry));
  } finally {
    db.close();
  }
}

/** Whether this browser can pick folders at all. */
export function canPickFolders(): boolean {
  return (
    typeof (globalThis as { showDirectoryPicker?: unknown }).showDirectoryPicker === 'function'
  );
}

/** Opens the browser's folder picker (read access). */
export async function pickFolder(): Promise<FileSystemDirectoryHandle> {
  const picker = (
    globalThis as {
      showDirectoryPicker?: (o: {
        mode: 'read';
        id?: string;
      }) => Promise<FileSystemDirectoryHandle>;
    }
  ).showDirectoryPicker;
  if (!picker)
    throw new LocalPackageError('This browser cannot open folders (no showDirectoryPicker)');
  return picker({ mode: 'read', id: 'clef-package' });
}

/**
 * Makes a picked package folder loadable: resolves to the package URL to give createClef.
 * Throws LocalPackageError when the folder is not a package or the service worker that serves
 * it is not in control.
 */
export async function loadLocalPackage(dir: FileSystemDirectoryHandle): Promise<string> {
  if (!navigator.serviceWorker?.controller) {
    throw new LocalPackageError(
      "Loading a folder needs the playground's service worker, which does not control this " +
        'page yet (it starts on the first visit; reload the page, and check the browser allows ' +
        'service workers here).',
    );
  }
  try {
    await dir.getFileHandle('manifest.json');
  } catch {
    throw new LocalPackageError(
      `"${dir.name}" has no manifest.json: pick the folder a converted package was written to`,
    );
  }
  const id = crypto.randomUUID();
  await remember({ id, name: dir.name, added: Date.now(), handle: dir });
  return new URL(`${LOCAL_PACKAGES_PATH}${id}/`, location.href).href;
}
