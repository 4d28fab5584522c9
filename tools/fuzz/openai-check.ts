/**
 * Checks a status and body against an OpenAI fuzz case's expectation (docs/interop.md: the
 * Decision and chat.completion shapes, OpenAI's error shape, System One's 400 for what
 * /v1/decisions cannot recognise, 413 past the body cap). Returns the problems, empty when the
 * answer is the documented one.
 */
import { parseRequestJson } from '../../src/protocol/json.js';
import type { DecisionAnswer, Leaf, OpenAiCase } from './openai-cases.js';

export interface OpenAiCheckOptions {
  /** The server's body cap: a larger body gets 413 in the path's error shape. */
  maxBodyBytes?: number;
  /**
   * The served model's context: a valid case may instead get 400 context_length_exceeded saying
   * it is over exactly this many tokens (never truncated). Unset: every valid case is answered.
   */
  contextTokens?: number;
  /** The path's dialect (what a 413's body looks like). */
  dialect?: 'decisions' | 'chat';
}

/** The members a response may have, as JSON.parse gives them (checked before use). */
interface AnswerBody {
  type?: string;
  name?: string | null;
  probability?: number;
  choice?: string | boolean;
  confidence?: number;
  score?: number;
  probabilities?: Array<{ value?: unknown; label?: string; probability: number }>;
}
interface ErrorMembers {
  message: string;
  type: string;
  param: string | null;
  code: string;
}
interface Body {
  error?: ErrorMembers;
  detail?: { error_type?: string; message?: string };
  answers?: AnswerBody[];
  model?: string;
  usage?: Record<string, number>;
  object?: string;
  choices?: Array<{ message?: { content?: string } }>;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const isProbability = (x: unknown) => typeof x === 'number' && x >= 0 && x <= 1;

function checkAnswer(
  want: DecisionAnswer,
  got: AnswerBody | undefined,
  at: string,
  out: string[],
): void {
  if (got?.type !== want.type || got.name !== want.name) {
    out.push(`${at}: ${JSON.stringify(got)?.slice(0, 120)}, want ${want.type} ${want.name}`);
    return;
  }
  if (want.type === 'predicate') {
    if (!same(Object.keys(got), ['type', 'name', 'probability']) || !isProbability(got.probability))
      out.push(`${at}: bad predicate answer`);
    return;
  }
  const probs = got.probabilities ?? [];
  const ps = probs.map((p) => p.probability as number);
  const max = Math.max(...ps);
  const sumOk = Math.abs(ps.reduce((s, x) => s + x, 0) - 1) <= ps.length * 5e-5 + 1e-5;
  if (!ps.every(isProbability) || !sumOk) out.push(`${at}: bad probabilities`);
  if (got.confidence !== max) out.push(`${at}: confidence ${got.confidence} is not the max`);
  if (want.type === 'choice') {
    if (!same(Object.keys(got), ['type', 'name', 'choice', 'confidence', 'probabilities']))
      out.push(`${at}: keys ${Object.keys(got).join()}`);
    if (
      !same(
        probs.map((p) => p.value),
        want.values,
      )
    )
      out.push(`${at}: values not as sent, typed`);
    const chosen = probs.find((p) => p.value === got.choice);
    if (chosen?.probability !== max) out.push(`${at}: choice ${String(got.choice)} is not the max`);
    return;
  }
  if (!same(Object.keys(got), ['type', 'name', 'score', 'confidence', 'probabilities']))
    out.push(`${at}: keys ${Object.keys(got).join()}`);
  if (
    !same(
      probs.map((p) => [p.label, p.value]),
      want.labels!.map((l, i) => [l, i]),
    )
  )
    out.push(`${at}: levels not as sent`);
  const mean = ps.reduce((s, x, i) => s + i * x, 0);
  const n = ps.length;
  if (Math.abs((got.score ?? NaN) - mean) > (n * (n - 1) * 0.5e-4) / 2 + 1e-4)
    out.push(`${at}: score ${got.score} is not the expected level`);
}

function checkLeaves(fields: Leaf[], value: unknown, at: string, out: string[]): void {
  if (!(value instanceof Map)) {
    out.push(`${at}: not an object`);
    return;
  }
  if (
    !same(
      [...value.keys()],
      fields.map((f) => f.key),
    )
  ) {
    out.push(`${at}: keys ${JSON.stringify([...value.keys()])}, want schema order`);
    return;
  }
  for (const f of fields) {
    const v = value.get(f.key) as unknown;
    const where = `${at}.${f.key}`;
    if (f.kind === 'object') checkLeaves(f.fields, v, where, out);
    else if (f.kind === 'boolean' && typeof v !== 'boolean') out.push(`${where}: not a boolean`);
    else if (f.kind === 'enum' && !f.values.includes(v as string))
      out.push(`${where}: not in enum`);
    else if (f.kind === 'integer') {
      const n = (v as { lexeme?: string })?.lexeme;
      const x = Number(n);
      if (n === undefined || !/^-?\d+$/.test(n) || x < f.min || x > f.max)
        out.push(`${where}: ${n} not an integer in [${f.min}, ${f.max}]`);
    }
  }
}

function checkOpenAiError(
  body: Body,
  status: number,
  want: { code: string; param?: string | null; problems: number },
) {
  const out: string[] = [];
  const e = body?.error as ErrorMembers;
  if (
    !same(Object.keys(body ?? {}), ['error']) ||
    !same(Object.keys(e ?? {}), ['message', 'type', 'param', 'code'])
  )
    return [`not OpenAI's error shape: ${JSON.stringify(body).slice(0, 200)}`];
  if (e.type !== (status >= 500 ? 'server_error' : 'invalid_request_error'))
    out.push(`type ${e.type}`);
  if (e.code !== want.code) out.push(`code ${e.code}, want ${want.code} (${e.message})`);
  if (want.param !== undefined && e.param !== want.param)
    out.push(`param ${e.param}, want ${want.param}`);
  const many = /^The request has (\d+) problems: /.exec(e.message);
  const count = many ? Number(many[1]) : 1;
  if (typeof e.message !== 'string' || e.message === '' || count !== want.problems)
    out.push(`${count} problems, want ${want.problems}: ${e.message}`);
  return out;
}

const systemOneOk = (body: Body) =>
  same(Object.keys(body ?? {}), ['detail']) &&
  same(Object.keys(body.detail ?? {}), ['error_type', 'message']) &&
  body.detail?.error_type === 'api_usage_error' &&
  typeof body.detail.message === 'string' &&
  body.detail.message !== '';

/** Problems with `status` + `text` as the answer to `c` on its dialect's path. */
export function checkOpenAiResponse(
  c: OpenAiCase,
  status: number,
  text: string,
  o: OpenAiCheckOptions = {},
): string[] {
  let body: Body;
  try {
    body = JSON.parse(text) as Body;
  } catch {
    return [`${status}: the body is not JSON: ${text.slice(0, 120)}`];
  }
  const size = typeof c.body === 'string' ? Buffer.byteLength(c.body) : c.body.length;
  if (o.maxBodyBytes !== undefined && size > o.maxBodyBytes) {
    // On /v1/decisions the body was never read: both dialects' members.
    const decisions = o.dialect === 'decisions';
    const openai = checkOpenAiError({ error: body.error }, 413, {
      code: 'request_too_large',
      problems: 1,
    });
    const ok =
      status === 413 && openai.length === 0 && (!decisions || systemOneOk({ detail: body.detail }));
    return ok ? [] : [`${status} (want 413): ${text.slice(0, 200)}`];
  }
  const e = c.expect;
  if (e.status === 200 && status === 400 && o.contextTokens !== undefined) {
    const m = /: input is (\d+) tokens; the model reads at most (\d+)\.$/.exec(
      body.error?.message ?? '',
    );
    const param = e.dialect === 'decisions' ? 'input' : 'messages';
    const ok =
      body.error?.code === 'context_length_exceeded' &&
      body.error.param === param &&
      m !== null &&
      Number(m[1]) > o.contextTokens &&
      Number(m[2]) === o.contextTokens;
    return ok ? [] : [`400 for a valid case: ${text.slice(0, 200)}`];
  }
  if (status !== e.status) return [`status ${status}, want ${e.status}: ${text.slice(0, 300)}`];
  if ('systemOne' in e)
    return systemOneOk(body) ? [] : [`not System One's 400: ${text.slice(0, 200)}`];
  if ('openai' in e) return checkOpenAiError(body, status, e.openai);
  const out: string[] = [];
  if (e.dialect === 'decisions') {
    if (!same(Object.keys(body), ['answers', 'model', 'usage']))
      return [`keys ${Object.keys(body).join()}`];
    if (body.model !== e.model) out.push(`model ${body.model}`);
    const answers = body.answers ?? [];
    if (answers.length !== e.answers.length) return [...out, `${answers.length} answers`];
    e.answers.forEach((a, i) => checkAnswer(a, answers[i], `answers[${i}]`, out));
    const u = body.usage ?? {};
    if (
      !Number.isInteger(u.input_tokens) ||
      u.input_tokens < 1 ||
      u.total_tokens !== u.input_tokens ||
      u.output_tokens !== 0
    )
      out.push(`usage ${JSON.stringify(u)}`);
    return out;
  }
  if (body.object !== 'chat.completion' || body.model !== e.model || body.choices?.length !== 1)
    return [`not a chat.completion: ${text.slice(0, 200)}`];
  const content = body.choices[0].message?.content;
  let parsed: unknown;
  try {
    parsed = parseRequestJson(content ?? '');
  } catch {
    return [`content is not JSON: ${String(content).slice(0, 120)}`];
  }
  checkLeaves(e.fields, parsed, 'content', out);
  if (body.usage?.completion_tokens !== 0 || body.usage.total_tokens !== body.usage.prompt_tokens)
    out.push(`usage ${JSON.stringify(body.usage)}`);
  return out;
}
