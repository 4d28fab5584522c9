/**
 * The playground as the panel specs open it: on the tiny package by URL (quick to load) and the
 * wasm device, in `context`.
 */
import type { BrowserContext, Page } from '@playwright/test';

export async function openPlayground(context: BrowserContext): Promise<Page> {
  await context.addInitScript(() =>
    localStorage.setItem(
      'clef-playground.settings',
      JSON.stringify({ source: 'url', url: '/models/tiny/', device: 'wasm' }),
    ),
  );
  const page = await context.newPage();
  await page.goto('/');
  return page;
}
