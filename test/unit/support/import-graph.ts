/**
 * The repository's import graph, read from the source text: relative imports (static, dynamic
 * and `export … from`) of every .ts/.mts/.mjs file under the given folders. Type-only imports
 * count too: a circle of types is still a circle a reader has to untangle.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const SOURCE = /\.(ts|mts|mjs)$/;
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]+)\1/g;

function walk(dir: string, out: string[]): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === 'node_modules' || name.startsWith('.')) continue;
    if (statSync(path).isDirectory()) walk(path, out);
    else if (SOURCE.test(name) && !name.endsWith('.d.ts') && !name.endsWith('.d.mts'))
      out.push(path);
  }
}

/** file (repo-relative) -> the repo-relative files it imports. */
export function importGraph(root: string, folders: string[]): Map<string, string[]> {
  const files: string[] = [];
  for (const f of folders) walk(join(root, f), files);
  const known = new Set(files.map((f) => relative(root, f)));
  const resolve = (from: string, spec: string): string | null => {
    const base = normalize(join(dirname(from), spec)).replace(/\.(js|mjs)$/, '');
    for (const candidate of [base + '.ts', base + '.mts', base + '.mjs', base]) {
      if (known.has(candidate)) return candidate;
    }
    return null;
  };
  const graph = new Map<string, string[]>();
  for (const abs of files) {
    const file = relative(root, abs);
    const text = readFileSync(abs, 'utf8');
    const targets: string[] = [];
    for (const m of text.matchAll(SPECIFIER)) {
      const target = resolve(file, m[2] as string);
      if (target) targets.push(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** Every elementary circle's first appearance, as a list of files (Tarjan's SCCs of size > 1). */
export function circles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const stack: string[] = [];
  const onStack = new Set<string>();
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    indexOf.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indexOf.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, indexOf.get(w) as number));
      }
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!indexOf.has(v)) visit(v);
  return out;
}
