/**
 * Unknown option names, refused with the nearest known one: a typo (`{ sahred: true }`) must not
 * pass silently as a default. Used by createClef, loadNodePackage and `<clef-decide>`'s
 * attributes (which warn instead of throwing).
 */

/** Edit distance with adjacent transpositions (optimal string alignment), case-insensitive. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const rows: number[][] = [];
  for (let i = 0; i <= s.length; i++) {
    const row = [i];
    for (let j = 1; j <= t.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) {
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      }
      row.push(best);
    }
    rows.push(row);
  }
  return rows[s.length]![t.length]!;
}

/**
 * The known name nearest to `name` (the first on a tie); separators (`-`, `_`) and case are
 * ignored first, so `abstain_below` and `abstainBelow` find `abstain-below`.
 */
export function nearestName(name: string, known: readonly string[]): string | undefined {
  const bare = (s: string) => s.toLowerCase().replace(/[-_]/g, '');
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = editDistance(bare(name), bare(candidate));
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** The names in `given` that are not in `known`, each with its nearest known name. */
export function unknownNames(
  given: Iterable<string>,
  known: readonly string[],
): Array<{ name: string; nearest: string | undefined }> {
  const set = new Set(known);
  const out: Array<{ name: string; nearest: string | undefined }> = [];
  for (const name of given) {
    if (!set.has(name)) out.push({ name, nearest: nearestName(name, known) });
  }
  return out;
}

/**
 * Throws a TypeError naming each option of `options` that `what` does not know, with the
 * nearest one it does: "createClef: unknown option 'sahred' (did you mean 'shared'?)".
 */
export function refuseUnknownOptions(
  what: string,
  options: object,
  known: readonly string[],
): void {
  const unknown = unknownNames(Object.keys(options), known);
  if (unknown.length === 0) return;
  const named = unknown.map(
    ({ name, nearest }) =>
      `'${name}'${nearest === undefined ? '' : ` (did you mean '${nearest}'?)`}`,
  );
  throw new TypeError(
    `${what}: unknown option${unknown.length > 1 ? 's' : ''} ${named.join(', ')}; ` +
      `the options are ${known.map((k) => `'${k}'`).join(', ')}`,
  );
}
