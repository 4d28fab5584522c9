/**
 * The tokenized prompt, as the model reads it: every token with its role (template text, the
 * state, a question's instructions, an option's semantics), from encodeRequest's spans.
 * Computed on the page with the package's own tokenizer.json.
 */
import { html, nothing, type TemplateResult } from 'lit';
import { cssProps, type CssProps } from '../element/clef-decide/css-props.js';
import { encodeRequest, type EncodedRequest } from '../clef/prompt.js';
import { loadTokenizerSync, type ClefTokenizer } from '../clef/tokenizer.js';
import { parseRequestJson } from '../protocol/json.js';
import { validateRequest } from '../protocol/validate.js';

export type TokenRole = 'template' | 'state' | 'instruction' | 'option';

export interface TokenPiece {
  /** Index of the first token in the piece (a piece joins tokens that split one character). */
  index: number;
  ids: number[];
  text: string;
  role: TokenRole;
  /** Question index (request order) for instruction and option tokens. */
  question?: number;
  /** The option id for option tokens. */
  option?: string;
}

export interface PromptView {
  pieces: TokenPiece[];
  encoded: EncodedRequest;
  questionIds: string[];
}

export async function fetchTokenizer(packageUrl: string): Promise<ClefTokenizer> {
  const base = packageUrl.endsWith('/') ? packageUrl : `${packageUrl}/`;
  const get = async (name: string): Promise<object | undefined> => {
    const response = await fetch(new URL(name, base));
    if (!response.ok) {
      if (name === 'tokenizer_config.json') return undefined;
      throw new Error(`${name}: HTTP ${response.status}`);
    }
    return (await response.json()) as object;
  };
  const [json, config] = await Promise.all([get('tokenizer.json'), get('tokenizer_config.json')]);
  return loadTokenizerSync(json!, config);
}

/** Roles per token from the encoding's spans. */
function rolesOf(encoded: EncodedRequest): Array<Omit<TokenPiece, 'index' | 'ids' | 'text'>> {
  const roles: Array<Omit<TokenPiece, 'index' | 'ids' | 'text'>> = encoded.inputIds.map(() => ({
    role: 'template' as const,
  }));
  for (let i = encoded.prefixTokens; i < encoded.prefixTokens + encoded.stateTokens; i++) {
    roles[i] = { role: 'state' };
  }
  encoded.questions.forEach((q, question) => {
    for (let i = q.span[0]; i < q.span[1]; i++) roles[i] = { role: 'instruction', question };
    q.optionSpans.forEach(([start, end], j) => {
      for (let i = start; i < end; i++) {
        roles[i] = { role: 'option', question, option: q.optionIds[j] };
      }
    });
  });
  return roles;
}

/** Tokenizes the request text the way the engine will; throws the engine's own errors. */
export function promptView(
  tokenizer: ClefTokenizer,
  requestText: string,
  contextTokens: number,
): PromptView {
  const valid = validateRequest(parseRequestJson(requestText));
  const encoded = encodeRequest(tokenizer, valid, { maxTokens: contextTokens });
  const roles = rolesOf(encoded);
  const pieces: TokenPiece[] = [];
  const ids = encoded.inputIds;
  for (let i = 0; i < ids.length;) {
    // A byte-level token may hold part of a character: join tokens until the text decodes.
    let end = i + 1;
    let text = tokenizer.decode(ids.slice(i, end));
    while (text.includes('\uFFFD') && end < ids.length && end - i < 4) {
      end++;
      text = tokenizer.decode(ids.slice(i, end));
    }
    pieces.push({ index: i, ids: ids.slice(i, end), text, ...roles[i]! });
    i = end;
  }
  return { pieces, encoded, questionIds: valid.questions.map((q) => q.id) };
}

/** Shown: the whole prompt up to this many tokens; a longer state is elided in the middle. */
const MAX_SHOWN = 2500;

function visible(pieces: TokenPiece[]): Array<TokenPiece | { hidden: number }> {
  if (pieces.length <= MAX_SHOWN) return pieces;
  const state = pieces.filter((p) => p.role === 'state');
  const excess = pieces.length - MAX_SHOWN;
  if (state.length <= excess + 200) return pieces.slice(0, MAX_SHOWN);
  const keepHead = Math.floor((state.length - excess) * 0.8);
  const cutFrom = state[keepHead]!.index;
  const cutTo = state[keepHead + excess]!.index;
  return [
    ...pieces.filter((p) => p.index < cutFrom),
    { hidden: excess },
    ...pieces.filter((p) => p.index >= cutTo),
  ];
}

// The prompt is shown with `white-space: pre-wrap`: these templates must not gain whitespace
// (hence prettier-ignore, and newlines written as expressions).

function showWhitespace(text: string): TemplateResult {
  const parts = text.split('\n');
  // prettier-ignore
  return html`${parts.map((part, i) => html`${part}${i < parts.length - 1 ? html`<span class="nl">↵</span>${'\n'}` : nothing}`)}`;
}

function pieceTitle(p: TokenPiece, questionId: string): string {
  const what =
    p.role === 'option'
      ? `${questionId} option ${p.option}`
      : p.role === 'instruction'
        ? `${questionId} instructions`
        : p.role;
  return `token ${p.index} · ${what} · id ${p.ids.join(' ')}`;
}

function renderPiece(view: PromptView, p: TokenPiece | { hidden: number }): TemplateResult {
  if ('hidden' in p) {
    return html`<span class="elided">… ${p.hidden} state tokens not shown …</span>`;
  }
  const q = p.question === undefined ? '' : view.questionIds[p.question]!;
  const hue: CssProps = p.question === undefined ? {} : { '--q': String(p.question % 6) };
  // prettier-ignore
  return html`<span class=${`tok ${p.role}`} ${cssProps(hue)} title=${pieceTitle(p, q)}>${showWhitespace(p.text)}</span>`;
}

export function renderPrompt(view: PromptView): TemplateResult {
  // prettier-ignore
  return html`<div class="prompt" role="region" tabindex="0" aria-label="Tokenized prompt">${visible(view.pieces).map((p) => renderPiece(view, p))}</div>`;
}
