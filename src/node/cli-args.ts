/**
 * Every command's arguments, parsed one way (node:util's parseArgs, strict) with its mistakes
 * said in clef-web's words: an unknown option names the nearest one the command has, a missing
 * value says which option wants one. The command prints the message after its own prefix
 * (`clef-web <command>: `) and its usage; nothing here prints or exits.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/** A mistake in how a command was called: said in one line, with the usage after it (exit 2). */
export class UsageError extends Error {
  override get name(): string {
    return 'UsageError';
  }
}

/** Edit distance between two short strings (insertions, deletions, substitutions). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost));
    }
    previous = row;
  }
  return previous[b.length]!;
}

/**
 * The option of `known` nearest to `given` (both without dashes): one that starts with it or
 * that it starts with, else the closest within a third of its length (at least 2 edits). Null
 * when none is near.
 */
export function nearestOption(given: string, known: readonly string[]): string | null {
  const prefixed = known.filter((k) => k.startsWith(given) || given.startsWith(k));
  if (prefixed.length === 1) return prefixed[0]!;
  let best: string | null = null;
  let bestDistance = Math.max(2, Math.floor(given.length / 3)) + 1;
  for (const k of known) {
    const d = distance(given, k);
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return best;
}

/** `--name` as written, from parseArgs' message ("Unknown option '--x'", "'-x'"). */
function quotedOption(message: string): string {
  return /'(-[^' ]*)/.exec(message)?.[1] ?? '';
}

/** parseArgs' error as a UsageError in clef-web's words. */
function usageError(e: Error & { code?: string }, options: Options): UsageError {
  // --help is every command's, answered before parsing: not an option to suggest.
  const known = Object.keys(options).filter((k) => k !== 'help');
  const flags = known.map((k) => `--${k}`).join(', ');
  const written = quotedOption(e.message);
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const near = nearestOption(written.replace(/^-+/, ''), known);
      if (known.length === 0) return new UsageError(`unknown option ${written}: it takes none`);
      return new UsageError(
        near
          ? `unknown option ${written} (did you mean --${near}?)`
          : `unknown option ${written} (its options: ${flags})`,
      );
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      const name = written.replace(/^-+/, '');
      if (options[name]?.type === 'boolean') {
        return new UsageError(`${written} takes no value (write ${written} alone)`);
      }
      return new UsageError(
        `${written} needs a value (${written} <value>; a value starting with "-": ${written}=-...)`,
      );
    }
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return new UsageError(
        `unexpected argument ${/'([^']*)'/.exec(e.message)?.[1] ?? ''}: it takes options only`,
      );
    default:
      return new UsageError(e.message);
  }
}

type OptionValue<O> = O extends { type: 'boolean' }
  ? boolean
  : O extends { multiple: true }
    ? string[]
    : string;

/** What a command's arguments parsed to: each option given (absent ones undefined). */
export interface ParsedCommand<T extends Options> {
  values: { [K in keyof T]?: OptionValue<T[K]> };
  positionals: string[];
}

/** parseArgs, strict, with its errors as UsageErrors naming what to write instead. */
export function parseCommandArgs<T extends Options>(
  argv: string[],
  options: T,
  allowPositionals = true,
): ParsedCommand<T> {
  try {
    const parsed = parseArgs({ args: argv, options, allowPositionals, strict: true });
    return parsed as unknown as ParsedCommand<T>;
  } catch (e) {
    throw usageError(e as Error & { code?: string }, options);
  }
}

/** What a number option accepts: any finite number, or an integer; bounds inclusive. */
export interface NumberRule {
  integer?: boolean;
  min?: number;
  max?: number;
}

/**
 * `text` as the number `rule` accepts, else null: the one reading of a number on every command
 * line. Blank is not 0, NaN and Infinity are not numbers, an integer is a safe one.
 */
export function readNumber(text: string, rule: NumberRule = {}): number | null {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n)) return null;
  if (rule.integer && !Number.isSafeInteger(n)) return null;
  if ((rule.min !== undefined && n < rule.min) || (rule.max !== undefined && n > rule.max)) {
    return null;
  }
  return n;
}

/** How a command says an option's value is not a number its rule accepts. */
export type NumberWording = (name: string, text: string, rule: NumberRule) => string;

/** `--port 99999: not an integer from 0 to 65535`, `--workers 0: not an integer >= 1`. */
export const notANumberInRange: NumberWording = (name, text, rule) => {
  const { min, max } = rule;
  const range =
    min !== undefined && max !== undefined
      ? ` from ${min} to ${max}`
      : min !== undefined
        ? ` >= ${min}`
        : max !== undefined
          ? ` <= ${max}`
          : '';
  return `--${name} ${text}: not ${rule.integer ? 'an integer' : 'a number'}${range}`;
};

/**
 * A number option: undefined when absent, else the number `rule` accepts; anything else is a
 * UsageError in the command's `wording` (each command keeps the words its users know).
 */
export function numberOption(
  name: string,
  text: string | undefined,
  rule: NumberRule = {},
  wording: NumberWording = notANumberInRange,
): number | undefined {
  if (text === undefined) return undefined;
  const n = readNumber(text, rule);
  if (n === null) throw new UsageError(wording(name, text, rule));
  return n;
}

/** An integer option from `min` to `max` (inclusive), or `fallback` when it is absent. */
export function integerOption(
  name: string,
  text: string | undefined,
  fallback: number,
  min = 1,
  max?: number,
): number {
  return numberOption(name, text, { integer: true, min, max }) ?? fallback;
}

/**
 * An error as one line a person reads: a file-system error names the path and what is wrong with
 * it (not `ENOENT: no such file or directory, open '...'`); any other error its message, never
 * its class name or stack.
 */
export function errorText(e: unknown): string {
  const err = e as (Error & { code?: string; path?: string; syscall?: string }) | null;
  const path = err?.path;
  if (path !== undefined) {
    const said: Record<string, string> = {
      ENOENT: 'no such file or folder',
      EACCES: 'permission denied',
      EPERM: 'not permitted',
      EISDIR: 'a folder, not a file',
      ENOTDIR: 'a file, not a folder',
      EEXIST: 'already exists',
      ENOSPC: 'no space left on the device',
    };
    const what = said[err?.code ?? ''];
    if (what) return `${path}: ${what}`;
  }
  if (err instanceof Error) return err.message;
  return String(e);
}

/** Why a server could not listen, and what to do: a port in use, one not allowed, a host. */
export function listenError(e: unknown, host: string, port: number, defaultPort: number): string {
  const code = (e as { code?: string }).code;
  const where = `${host}:${port}`;
  if (code === 'EADDRINUSE') {
    return `${where} is in use (another server?): pick another port with --port N (--port 0: any free one)`;
  }
  if (code === 'EACCES') {
    return `cannot listen on ${where}: permission denied (ports below 1024 need privileges; --port ${defaultPort})`;
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return `cannot listen on ${where}: ${host} is not an address of this machine (--host 127.0.0.1, or 0.0.0.0 for every interface)`;
  }
  return `cannot listen on ${where}: ${errorText(e)}`;
}
