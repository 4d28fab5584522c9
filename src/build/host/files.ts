/**
 * The files the build tools read and write, through the synchronous calls of Node's `fs` they
 * make (named as Node names them, so a tool reads as Node code). In Node they are Node's own,
 * on the disk; the playground's train worker hands in its in-memory files with `useFiles`
 * before it trains (src/train-web/memory-files.ts), so the page trains and converts with the
 * very code `clef-web train` runs.
 */
import { nodeBuiltin } from './node-builtins.js';

export interface FileStats {
  size: number;
  isDirectory(): boolean;
  isFile(): boolean;
}

/** What a host gives the build tools: the calls below, and where temporary folders go. */
export interface BuildFiles {
  existsSync(path: string): boolean;
  mkdirSync(path: string, options?: { recursive?: boolean }): unknown;
  mkdtempSync(prefix: string): string;
  readdirSync(path: string): string[];
  statSync(path: string): FileStats;
  readFileSync(path: string): Uint8Array;
  readFileSync(path: string, encoding: 'utf8'): string;
  writeFileSync(path: string, data: string | ArrayBufferView): void;
  copyFileSync(from: string, to: string): void;
  renameSync(from: string, to: string): void;
  rmSync(path: string, options?: { recursive?: boolean; force?: boolean }): void;
  openSync(path: string, flags: 'r' | 'w'): number;
  closeSync(fd: number): void;
  writeSync(fd: number, data: ArrayBufferView, offset?: number, length?: number): number;
  readSync(
    fd: number,
    target: ArrayBufferView,
    offset: number,
    length: number,
    position: number | null,
  ): number;
  tmpdir(): string;
}

let handedIn: BuildFiles | undefined;

/**
 * Makes the build tools read and write `files` from now on (the page's train worker does);
 * undefined: Node's again.
 */
export function useFiles(files: BuildFiles | undefined): void {
  handedIn = files;
}

function nodeFiles(): BuildFiles | undefined {
  const fs = nodeBuiltin('node:fs');
  const os = nodeBuiltin('node:os');
  return fs && os ? { ...fs, tmpdir: os.tmpdir } : undefined;
}

function files(): BuildFiles {
  handedIn ??= nodeFiles();
  if (handedIn === undefined) {
    throw new Error('the build tools have no files here: hand them some with useFiles()');
  }
  return handedIn;
}

export function existsSync(path: string): boolean {
  return files().existsSync(path);
}
export function mkdirSync(path: string, options?: { recursive?: boolean }): void {
  files().mkdirSync(path, options);
}
export function mkdtempSync(prefix: string): string {
  return files().mkdtempSync(prefix);
}
export function readdirSync(path: string): string[] {
  return files().readdirSync(path);
}
export function statSync(path: string): FileStats {
  return files().statSync(path);
}
export function readFileSync(path: string): Uint8Array;
export function readFileSync(path: string, encoding: 'utf8'): string;
export function readFileSync(path: string, encoding?: 'utf8'): Uint8Array | string {
  return encoding === undefined ? files().readFileSync(path) : files().readFileSync(path, encoding);
}
export function writeFileSync(path: string, data: string | ArrayBufferView): void {
  files().writeFileSync(path, data);
}
export function copyFileSync(from: string, to: string): void {
  files().copyFileSync(from, to);
}
export function renameSync(from: string, to: string): void {
  files().renameSync(from, to);
}
export function rmSync(path: string, options?: { recursive?: boolean; force?: boolean }): void {
  files().rmSync(path, options);
}
export function openSync(path: string, flags: 'r' | 'w'): number {
  return files().openSync(path, flags);
}
export function closeSync(fd: number): void {
  files().closeSync(fd);
}
export function writeSync(
  fd: number,
  data: ArrayBufferView,
  offset?: number,
  length?: number,
): number {
  return files().writeSync(fd, data, offset, length);
}
export function readSync(
  fd: number,
  target: ArrayBufferView,
  offset: number,
  length: number,
  position: number | null,
): number {
  return files().readSync(fd, target, offset, length, position);
}
/** Where temporary folders go (Node: the OS's; the page: its in-memory `/tmp`). */
export function tmpdir(): string {
  return files().tmpdir();
}
