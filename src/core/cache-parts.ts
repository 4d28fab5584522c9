/**
 * Package files in Cache Storage, in parts. Chromium refuses a Cache Storage entry above about
 * 256 MiB (measured in headless Chromium 156 with a 10 GiB quota: 200 MiB stored, 260 MiB and
 * up "Unexpected internal error", whether the body was an array, a Blob or a stream), while a
 * Clef-flash package has files of 1 to 1.5 GiB. A file above `partBytes` is stored as parts
 * under `<key>&part=<k>` plus a small index entry under its own key, written last: an index
 * means every part was stored. Reads assemble the parts into one buffer, or into one Blob that
 * Chromium keeps on disk.
 */

/** Parts of at most 128 MiB: well under the limit measured above. */
export const CACHE_PART_BYTES = 128 * 2 ** 20;

/** The index entry's header: how many parts follow. */
const PARTS_HEADER = 'x-clef-web-parts';

/** The slice of the Cache API this file uses (a fake one in unit tests). */
export type CacheLike = Pick<Cache, 'match' | 'put' | 'delete'>;

const partKey = (key: string, k: number) => `${key}&part=${k}`;

async function partCount(cache: CacheLike, key: string): Promise<Response | number | null> {
  const hit = await cache.match(key).catch(() => undefined);
  if (!hit) return null;
  const parts = hit.headers.get(PARTS_HEADER);
  return parts === null ? hit : Number(parts);
}

/** Stores `data` under `key`, in parts when it is big. Throws what Cache.put throws. */
export async function putFile(
  cache: CacheLike,
  key: string,
  data: Uint8Array,
  partBytes = CACHE_PART_BYTES,
): Promise<void> {
  if (data.byteLength <= partBytes) {
    await cache.put(key, new Response(data as Uint8Array<ArrayBuffer>));
    return;
  }
  const parts = Math.ceil(data.byteLength / partBytes);
  try {
    for (let k = 0; k < parts; k++) {
      const piece = data.subarray(k * partBytes, Math.min(data.byteLength, (k + 1) * partBytes));
      // The Response copies the bytes: each part costs one part of transient memory.
      await cache.put(partKey(key, k), new Response(piece as Uint8Array<ArrayBuffer>));
    }
    await cache.put(key, new Response('', { headers: { [PARTS_HEADER]: String(parts) } }));
  } catch (e) {
    await deleteFile(cache, key, parts);
    throw e;
  }
}

/** The file's bytes (one buffer of `bytes`), or null when it is absent or incomplete. */
export async function matchFile(
  cache: CacheLike,
  key: string,
  bytes: number,
): Promise<Uint8Array | null> {
  const found = await partCount(cache, key);
  if (found === null) return null;
  if (typeof found !== 'number') return new Uint8Array(await found.arrayBuffer());
  const out = new Uint8Array(bytes);
  let offset = 0;
  for (let k = 0; k < found; k++) {
    const part = await cache.match(partKey(key, k)).catch(() => undefined);
    if (!part) return null;
    const piece = new Uint8Array(await part.arrayBuffer());
    if (offset + piece.byteLength > bytes) return null;
    out.set(piece, offset);
    offset += piece.byteLength;
  }
  return offset === bytes ? out : null;
}

/** The file as a Blob read from the cache's copy on disk, or null when it is not cached. */
export async function matchBlob(cache: CacheLike, key: string): Promise<Blob | null> {
  const found = await partCount(cache, key);
  if (found === null) return null;
  if (typeof found !== 'number') return found.blob();
  const blobs: Blob[] = [];
  for (let k = 0; k < found; k++) {
    const part = await cache.match(partKey(key, k)).catch(() => undefined);
    if (!part) return null;
    blobs.push(await part.blob());
  }
  return new Blob(blobs);
}

/** Whether the file is cached (its index or single entry). */
export async function hasFile(cache: CacheLike, key: string): Promise<boolean> {
  return (await partCount(cache, key)) !== null;
}

/** Removes the file and any parts (best effort: a failed delete is not an error here). */
export async function deleteFile(cache: CacheLike, key: string, parts?: number): Promise<void> {
  const found = parts ?? (await partCount(cache, key));
  await cache.delete(key).catch(() => false);
  if (typeof found === 'number') {
    for (let k = 0; k < found; k++) await cache.delete(partKey(key, k)).catch(() => false);
  }
}
