/**
 * Each package entry's exports, as the TypeScript checker resolves them (re-export chains
 * included); test/unit/package/api-report.test.ts pins the lists. Run it to print the counts:
 *
 *   npx tsx tools/api-report.ts [--list] [entry.ts ...]
 */
import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import ts from 'typescript';

const ENTRIES = [
  'src/index.ts',
  'src/protocol-entry.ts',
  'src/element/index.ts',
  'src/sw/index.ts',
  'src/vite/index.ts',
  'src/node/index.ts',
];

/** package.json's entries with types, as source files (dist/types/src/x.d.ts -> src/x.ts). */
export function packageEntries(root: string): string[] {
  const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { types?: string }>;
  };
  return Object.values(pkg.exports)
    .map((v) => (typeof v === 'object' ? v.types : undefined))
    .filter((t): t is string => t !== undefined && !t.startsWith('./types/'))
    .map((t) => t.replace(/^\.\/dist\/(types|node)\//, '').replace(/\.d\.ts$/, '.ts'))
    .map((t) => (t.startsWith('src/') ? t : `src/${t}`))
    .sort();
}

function programOf(root: string, entries: string[]): ts.Program {
  return ts.createProgram(
    entries.map((e) => resolve(root, e)),
    {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      strict: true,
      skipLibCheck: true,
      noEmit: true,
      experimentalDecorators: true,
      resolveJsonModule: true,
      types: ['node'],
    },
  );
}

/**
 * The project's source files the entries reach (repo-relative): what the published declarations
 * are written from.
 */
export function reachedSources(root: string, entries: string[]): string[] {
  return programOf(root, entries)
    .getSourceFiles()
    .map((f) => relative(root, f.fileName))
    .filter((f) => f.startsWith('src/') && !f.endsWith('.d.ts'))
    .sort();
}

/** Every export of each entry, as the checker resolves it. */
export function exportLists(root: string, entries: string[]): Record<string, string[]> {
  const program = programOf(root, entries);
  const checker = program.getTypeChecker();
  const lists: Record<string, string[]> = {};
  for (const entry of entries) {
    const file = program.getSourceFile(resolve(root, entry));
    const module = file && checker.getSymbolAtLocation(file);
    if (!module) throw new Error(`${entry}: not read as a module`);
    lists[entry] = checker
      .getExportsOfModule(module)
      .map((s) => {
        const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
        return (target.flags & ts.SymbolFlags.Value ? '' : 'type ') + s.name;
      })
      .sort();
  }
  return lists;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const list = process.argv.includes('--list');
  const given = process.argv.slice(2).filter((a) => a !== '--list');
  const lists = exportLists(process.cwd(), given.length > 0 ? given : ENTRIES);
  for (const [entry, names] of Object.entries(lists)) {
    const types = names.filter((n) => n.startsWith('type ')).length;
    console.log(`${entry}: ${names.length} names (${names.length - types} values, ${types} types)`);
    if (list) console.log(`  ${names.join('\n  ')}`);
  }
}
