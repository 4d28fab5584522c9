/**
 * README's bundler recipes as the consumer-app test follows them (test/browser/consumer-app.spec.ts):
 * the files each recipe gives, read from README.md itself (a code block whose first line names its
 * file: `// webpack.config.js`, `<!-- dist/index.html -->`), written into a fresh project, and the
 * page's answer read the way the recipe shows it (`#answer`).
 */
import { expect, type Browser } from '@playwright/test';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../../..');

/** The `### <title>` section of README.md's "Use it in your app". */
export function readmeSection(title: string): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n### ${title}\n`);
  if (start < 0) throw new Error(`README.md has no "### ${title}" section`);
  const end = readme.indexOf('\n### ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** The files a README section gives: each code block whose first line names a file. */
export function readmeFiles(title: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const m of readmeSection(title).matchAll(/^```\w*\n([\s\S]*?)^```/gm)) {
    const code = m[1]!;
    const named = /^(?:\/\/|<!--)\s*([\w./-]+\.\w+)\s*(?:-->)?\s*\n/.exec(code);
    if (named) files.set(named[1]!, code);
  }
  return files;
}

/** The README section's shell commands (its ```sh blocks, one command line each). */
export function readmeCommands(title: string): string[] {
  return [...readmeSection(title).matchAll(/^```sh\n([\s\S]*?)^```/gm)].flatMap((m) =>
    m[1]!
      .split('\n')
      .map((line) => line.replace(/\s+#.*$/, '').trim())
      .filter(Boolean),
  );
}

/** Writes `files` (path -> text) under `dir`. */
export function writeFiles(dir: string, files: Map<string, string>): void {
  for (const [path, text] of files) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

/**
 * Opens `origin` and waits for the recipe's page to show its answer in `#answer`; returns it
 * with every URL requested and the page's errors (a failed load is a page error, not a hang).
 */
export async function answerShown(browser: Browser, origin: string, timeout = 90_000) {
  const page = await browser.newPage();
  const requested: string[] = [];
  const errors: string[] = [];
  page.context().on('request', (r) => requested.push(r.url()));
  page.on('pageerror', (e) => errors.push(e.message));
  const started = Date.now();
  try {
    // A failed load is an uncaught rejection in the page: the answer never comes, so stop there.
    const failed = new Promise<null>((r) => page.once('pageerror', () => r(null)));
    await page.goto(`${origin}/`);
    const shown = page
      .waitForFunction(
        () => {
          const t = document.querySelector('#answer')?.textContent ?? '';
          return t !== '' && t !== 'deciding...' ? t : null;
        },
        undefined,
        { timeout },
      )
      .then(
        (h) => h.jsonValue() as Promise<string>,
        () => null,
      );
    const answer = await Promise.race([shown, failed]);
    const isolated = await page.evaluate(() => crossOriginIsolated);
    return { answer, isolated, requested, errors, ms: Date.now() - started };
  } finally {
    await page.close();
  }
}

/** The recipe's page answered the fraud message, same-origin only. */
export function expectRecipeAnswer(
  result: Awaited<ReturnType<typeof answerShown>>,
  origin: string,
  isolated = true,
) {
  expect(result.errors).toEqual([]);
  expect(result.answer).toBe('report_fraud');
  expect(result.isolated).toBe(isolated);
  expect(result.requested.filter((url) => !url.startsWith(`${origin}/`))).toEqual([]);
}
