/**
 * Trained packages kept in the origin-private file system (OPFS), under `clef-trained/<name>/`:
 * they survive a reload, and the playground loads them as it loads a picked folder (the service
 * worker serves the directory's files, local-package.ts).
 */
const ROOT = 'clef-trained';

/** A model name as a folder (and .zip) name: `@cf/acme/router` → `_cf_acme_router`. */
export function folderName(model: string): string {
  return model.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_') || 'model';
}

async function trainedRoot(): Promise<FileSystemDirectoryHandle> {
  if (!navigator.storage?.getDirectory) {
    throw new Error('This browser has no origin-private file system to keep the trained model in');
  }
  const root = await navigator.storage.getDirectory();
  return root.getDirectoryHandle(ROOT, { create: true });
}

/** Writes `files` (path → bytes) as `clef-trained/<name>/`, replacing what was there. */
export async function saveTrainedPackage(
  name: string,
  files: Record<string, Uint8Array>,
): Promise<FileSystemDirectoryHandle> {
  const root = await trainedRoot();
  await root.removeEntry(name, { recursive: true }).catch(() => undefined);
  const dir = await root.getDirectoryHandle(name, { create: true });
  for (const [path, bytes] of Object.entries(files)) {
    const parts = path.split('/');
    let parent = dir;
    for (const part of parts.slice(0, -1)) {
      parent = await parent.getDirectoryHandle(part, { create: true });
    }
    const handle = await parent.getFileHandle(parts[parts.length - 1] as string, { create: true });
    const writable = await handle.createWritable();
    await writable.write(bytes as Uint8Array<ArrayBuffer>);
    await writable.close();
  }
  return dir;
}

export async function removeTrainedPackage(name: string): Promise<void> {
  const root = await trainedRoot();
  await root.removeEntry(name, { recursive: true }).catch(() => undefined);
}
