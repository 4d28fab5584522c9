/**
 * The playground's train worker's files, held in memory: the synchronous calls the trainer, the
 * release writer and the converter make (src/build/host/files.ts), which the worker hands them
 * with `useFiles(memoryFiles)`, so the page trains and converts with the very code
 * `clef-web train` runs on the disk. Paths are POSIX and absolute (resolved against `/`).
 * Errors carry Node's codes (ENOENT, EEXIST, ENOTDIR, EBADF) for the callers that test them.
 */
import type { BuildFiles } from '../build/host/files.js';
import { dirname, resolve } from '../build/host/posix-paths.js';

const files = new Map<string, Uint8Array>();
/** Sizes of files being written through a descriptor (their buffer grows by doubling). */
const lengths = new Map<string, number>();
const dirs = new Set<string>(['/']);

interface Descriptor {
  path: string;
  writing: boolean;
  position: number;
}
const descriptors = new Map<number, Descriptor>();
let nextFd = 3;
let tempCounter = 0;

class FsError extends Error {
  constructor(
    readonly code: string,
    syscall: string,
    path: string,
  ) {
    super(`${code}: ${syscall} '${path}'`);
  }
}

function fileBytes(path: string): Uint8Array {
  const bytes = files.get(path);
  if (bytes === undefined) throw new FsError(dirs.has(path) ? 'EISDIR' : 'ENOENT', 'open', path);
  return bytes.subarray(0, lengths.get(path) ?? bytes.length);
}

function needParent(path: string, syscall: string): void {
  if (!dirs.has(dirname(path))) throw new FsError('ENOENT', syscall, path);
}

function toBytes(data: string | ArrayBufferView): Uint8Array {
  if (typeof data === 'string') return new TextEncoder().encode(data);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

export function existsSync(path: string): boolean {
  const p = resolve(path);
  return files.has(p) || dirs.has(p);
}

export function mkdirSync(path: string, options?: { recursive?: boolean }): void {
  const p = resolve(path);
  if (dirs.has(p)) {
    if (options?.recursive) return;
    throw new FsError('EEXIST', 'mkdir', p);
  }
  if (files.has(p)) throw new FsError('EEXIST', 'mkdir', p);
  if (!dirs.has(dirname(p))) {
    if (!options?.recursive) throw new FsError('ENOENT', 'mkdir', p);
    mkdirSync(dirname(p), options);
  }
  dirs.add(p);
}

export function mkdtempSync(prefix: string): string {
  const path = resolve(`${prefix}${(tempCounter++).toString(36).padStart(6, '0')}`);
  mkdirSync(dirname(path), { recursive: true });
  mkdirSync(path);
  return path;
}

export function readdirSync(path: string): string[] {
  const p = resolve(path);
  if (!dirs.has(p)) throw new FsError(files.has(p) ? 'ENOTDIR' : 'ENOENT', 'scandir', p);
  const names = new Set<string>();
  const prefix = p === '/' ? '/' : `${p}/`;
  for (const key of [...files.keys(), ...dirs]) {
    if (key !== p && key.startsWith(prefix)) names.add(key.slice(prefix.length).split('/')[0]!);
  }
  return [...names].sort();
}

export function statSync(path: string): {
  size: number;
  isDirectory(): boolean;
  isFile(): boolean;
} {
  const p = resolve(path);
  const isDir = dirs.has(p);
  const size = isDir ? 0 : fileBytes(p).length;
  return { size, isDirectory: () => isDir, isFile: () => !isDir };
}

export function readFileSync(path: string): Uint8Array;
export function readFileSync(path: string, encoding: 'utf8' | 'utf-8'): string;
export function readFileSync(path: string, encoding?: string): Uint8Array | string {
  const bytes = fileBytes(resolve(path));
  return encoding === undefined ? bytes.slice() : new TextDecoder().decode(bytes);
}

export function writeFileSync(path: string, data: string | ArrayBufferView): void {
  const p = resolve(path);
  needParent(p, 'open');
  if (dirs.has(p)) throw new FsError('EISDIR', 'open', p);
  files.set(p, toBytes(data).slice());
  lengths.delete(p);
}

export function copyFileSync(from: string, to: string): void {
  writeFileSync(to, fileBytes(resolve(from)));
}

export function renameSync(from: string, to: string): void {
  const a = resolve(from);
  const b = resolve(to);
  needParent(b, 'rename');
  if (files.has(a)) {
    files.set(b, fileBytes(a).slice());
    files.delete(a);
    lengths.delete(a);
    lengths.delete(b);
    return;
  }
  if (!dirs.has(a)) throw new FsError('ENOENT', 'rename', a);
  if (dirs.has(b) && readdirSync(b).length > 0) throw new FsError('ENOTEMPTY', 'rename', b);
  const move = (key: string) => (key === a ? b : `${b}${key.slice(a.length)}`);
  for (const key of [...files.keys()].filter((k) => k.startsWith(`${a}/`))) {
    files.set(move(key), fileBytes(key).slice());
    files.delete(key);
    lengths.delete(key);
  }
  for (const key of [...dirs].filter((k) => k === a || k.startsWith(`${a}/`))) {
    dirs.delete(key);
    dirs.add(move(key));
  }
}

export function rmSync(path: string, options?: { recursive?: boolean; force?: boolean }): void {
  const p = resolve(path);
  if (files.delete(p)) {
    lengths.delete(p);
    return;
  }
  if (!dirs.has(p)) {
    if (options?.force) return;
    throw new FsError('ENOENT', 'rm', p);
  }
  if (!options?.recursive) throw new FsError('EISDIR', 'rm', p);
  for (const key of [...files.keys()]) {
    if (key.startsWith(`${p}/`)) {
      files.delete(key);
      lengths.delete(key);
    }
  }
  for (const key of [...dirs]) if (key === p || key.startsWith(`${p}/`)) dirs.delete(key);
  dirs.add('/');
}

export function openSync(path: string, flags: 'r' | 'w'): number {
  const p = resolve(path);
  if (flags === 'w') {
    needParent(p, 'open');
    files.set(p, new Uint8Array(64 * 1024));
    lengths.set(p, 0);
  } else {
    fileBytes(p);
  }
  const fd = nextFd++;
  descriptors.set(fd, { path: p, writing: flags === 'w', position: 0 });
  return fd;
}

function descriptor(fd: number): Descriptor {
  const d = descriptors.get(fd);
  if (d === undefined) throw new FsError('EBADF', 'fd', String(fd));
  return d;
}

export function closeSync(fd: number): void {
  const d = descriptor(fd);
  descriptors.delete(fd);
  if (d.writing) {
    files.set(d.path, fileBytes(d.path).slice());
    lengths.delete(d.path);
  }
}

/** Appends at the descriptor's position (the callers write files front to back). */
export function writeSync(fd: number, data: ArrayBufferView, offset = 0, length?: number): number {
  const d = descriptor(fd);
  if (!d.writing) throw new FsError('EBADF', 'write', d.path);
  const bytes = toBytes(data);
  const chunk = bytes.subarray(offset, offset + (length ?? bytes.length - offset));
  let buffer = files.get(d.path) as Uint8Array;
  const end = d.position + chunk.length;
  if (end > buffer.length) {
    const grown = new Uint8Array(Math.max(end, buffer.length * 2));
    grown.set(buffer.subarray(0, lengths.get(d.path)));
    files.set(d.path, (buffer = grown));
  }
  buffer.set(chunk, d.position);
  d.position = end;
  lengths.set(d.path, Math.max(lengths.get(d.path) ?? 0, end));
  return chunk.length;
}

export function readSync(
  fd: number,
  target: ArrayBufferView,
  offset: number,
  length: number,
  position: number | null,
): number {
  const d = descriptor(fd);
  const bytes = fileBytes(d.path);
  const start = position ?? d.position;
  const chunk = bytes.subarray(start, Math.min(bytes.length, start + length));
  toBytes(target).set(chunk, offset);
  if (position === null) d.position = start + chunk.length;
  return chunk.length;
}

/** Temporary folders go under `/tmp`. */
export function tmpdir(): string {
  return '/tmp';
}

/** The calls above, as the build tools take them. */
export const memoryFiles: BuildFiles = {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  statSync,
  readFileSync,
  writeFileSync,
  copyFileSync,
  renameSync,
  rmSync,
  openSync,
  closeSync,
  writeSync,
  readSync,
  tmpdir,
};

/** Every file under `dir`, by its path relative to it (the worker hands these to the page). */
export function filesUnder(dir: string): Map<string, Uint8Array> {
  const p = resolve(dir);
  const out = new Map<string, Uint8Array>();
  for (const key of [...files.keys()].sort()) {
    if (key.startsWith(`${p}/`)) out.set(key.slice(p.length + 1), fileBytes(key));
  }
  return out;
}

/** Forgets every file (between training runs in the same worker). */
export function clearFiles(): void {
  files.clear();
  lengths.clear();
  dirs.clear();
  dirs.add('/');
  descriptors.clear();
}
