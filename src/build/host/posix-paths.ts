/**
 * The path calls the build tools make, POSIX, with `/` as the working directory: what paths.ts
 * gives them where there is no Node (the page's train worker, whose files are in memory).
 */

/** The segments of `path` with `.` and `..` applied (a relative path keeps its leading `..`). */
function normalizeParts(path: string): string[] {
  const absolute = path.startsWith('/');
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part !== '..') out.push(part);
    else if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
    else if (!absolute) out.push('..');
  }
  return out;
}

export function resolve(...paths: string[]): string {
  let joined = '';
  for (const p of paths) {
    if (p === '') continue;
    joined = p.startsWith('/') ? p : `${joined}/${p}`;
  }
  return `/${normalizeParts(joined).join('/')}`;
}

export function join(...paths: string[]): string {
  const joined = paths.filter((p) => p !== '').join('/');
  if (joined === '') return '.';
  const body = normalizeParts(joined).join('/');
  const absolute = joined.startsWith('/');
  if (body === '') return absolute ? '/' : joined.endsWith('/') ? './' : '.';
  return `${absolute ? '/' : ''}${body}${joined.endsWith('/') ? '/' : ''}`;
}

export function dirname(path: string): string {
  const p = path.length > 1 ? path.replace(/\/+$/, '') : path;
  const i = p.lastIndexOf('/');
  if (i < 0) return '.';
  if (i === 0) return '/';
  return p.slice(0, i);
}

export function basename(path: string, ext?: string): string {
  const p = path.length > 1 ? path.replace(/\/+$/, '') : path;
  const base = p.slice(p.lastIndexOf('/') + 1);
  return ext !== undefined && base.endsWith(ext) && base !== ext
    ? base.slice(0, -ext.length)
    : base;
}

export function relative(from: string, to: string): string {
  const a = normalizeParts(resolve(from));
  const b = normalizeParts(resolve(to));
  let common = 0;
  while (common < a.length && common < b.length && a[common] === b[common]) common++;
  return [...a.slice(common).map(() => '..'), ...b.slice(common)].join('/');
}
