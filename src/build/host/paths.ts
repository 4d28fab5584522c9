/**
 * The path calls the build tools make: Node's `path` in Node (so a Windows path is a Windows
 * path), POSIX against `/` elsewhere (posix-paths.ts: the page's in-memory files are POSIX).
 */
import { nodeBuiltin } from './node-builtins.js';
import * as posix from './posix-paths.js';

type Paths = Pick<typeof posix, 'join' | 'resolve' | 'dirname' | 'basename' | 'relative'>;

const paths: Paths = nodeBuiltin('node:path') ?? posix;

export const { join, resolve, dirname, basename, relative } = paths;
