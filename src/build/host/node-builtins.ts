/**
 * Node's own modules when the build tools run in Node, reached through
 * `process.getBuiltinModule` (Node 20.16 and later) rather than an import: the build room then
 * imports nothing a page lacks, and the playground's train worker bundles it as it is. Where
 * there is no Node (a page), each is undefined and files.ts, paths.ts and sha256.ts use what the
 * page hands in or their own.
 */
type Builtins = {
  'node:fs': typeof import('node:fs');
  'node:os': typeof import('node:os');
  'node:path': typeof import('node:path');
  'node:crypto': typeof import('node:crypto');
};

export function nodeBuiltin<K extends keyof Builtins>(id: K): Builtins[K] | undefined {
  const process = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } })
    .process;
  return process?.getBuiltinModule?.(id) as Builtins[K] | undefined;
}
