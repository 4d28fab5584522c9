/**
 * The playground's settings (the package's source, its URL and the device), kept in localStorage
 * between visits; a `?package=<url>` link overrides them.
 */
import type { Device, Source } from './view-state.js';

const SETTINGS_KEY = 'clef-playground.settings';

export interface Settings {
  source: Source;
  url: string;
  device: Device;
}

export function readSettings(): Settings {
  const fallback: Settings = { source: 'default', url: '', device: 'auto' };
  let settings = fallback;
  try {
    settings = {
      ...fallback,
      ...(JSON.parse(localStorage.getItem(SETTINGS_KEY) ?? '{}') as object),
    };
  } catch {
    // Unreadable settings: the defaults.
  }
  // `?package=<url>` opens the playground on that package (a link to share a model).
  const fromLink = new URLSearchParams(location.search).get('package');
  return fromLink ? { ...settings, source: 'url', url: fromLink } : settings;
}

/** Kept once a package loads, so the next visit opens it again. */
export function writeSettings(settings: Settings): void {
  localStorage.setItem(SETTINGS_KEY, JSON.stringify(settings));
}
