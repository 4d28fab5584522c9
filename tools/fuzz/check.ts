/**
 * Checks a status and body against a fuzz case's expectation (system-one.md's error table and
 * response shape). Returns the problems found, empty when the answer is the prescribed one.
 * Bodies are read with the lossless parser so key order (answers, probabilities) is seen as sent.
 */
import { parseRequestJson } from '../../src/protocol/json.js';
import type { JsonValue, ValidRequest } from '../../src/protocol/types.js';
import type { Expectation, FuzzCase } from './expect.js';
import type { ExpectedAnswer } from './valid.js';

export interface CheckOptions {
  /** The served model's context: a 200-expected case that is not small may get 400 over it. */
  contextTokens: number;
  /** The server's body cap: a larger body gets 413 before anything else. */
  maxBodyBytes?: number;
}

type Plain = null | boolean | number | string | Plain[] | { [k: string]: Plain };

/** A parsed value with numbers as doubles and Maps as objects (for deep equality). */
function plain(v: JsonValue | undefined): Plain {
  if (v === undefined || v === null || typeof v !== 'object') return (v ?? null) as Plain;
  if (Array.isArray(v)) return v.map(plain);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [k, plain(x)]));
  if ('kind' in v && v.kind === 'py-number') return Number(v.lexeme);
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x as JsonValue)]));
}
const keys = (v: JsonValue | undefined) => (v instanceof Map ? [...v.keys()] : null);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
/** A number Python's round(x, 4) can give: a multiple of 0.0001 in [0, 1]. */
const isProbability = (x: Plain) =>
  typeof x === 'number' && x >= 0 && x <= 1 && Math.abs(x * 1e4 - Math.round(x * 1e4)) < 1e-6;

function checkAnswer(expected: ExpectedAnswer, got: JsonValue | undefined, out: string[]): void {
  const at = `answers.${expected.id}`;
  const k = keys(got);
  const a = plain(got) as Record<string, Plain>;
  if (expected.type === 'noul') {
    if (!same(k, ['type', 'noul']) || a.type !== 'noul' || !isProbability(a.noul!))
      out.push(`${at}: not a noul answer: ${JSON.stringify(a)}`);
    return;
  }
  const probs = (got as Map<string, JsonValue>).get?.('probabilities');
  const p = plain(probs) as Record<string, number> | null;
  const values = p ? Object.values(p) : [];
  const max = Math.max(...values);
  // Each probability rounded to 4 places: the sum is 1 within half a unit per option (+ float32).
  const sumOk = Math.abs(values.reduce((s, x) => s + x, 0) - 1) <= values.length * 5e-5 + 1e-5;
  if (!p || !values.every(isProbability) || !sumOk) out.push(`${at}: bad probabilities`);
  if (expected.type === 'choice') {
    if (!same(k, ['type', 'choice', 'confidence', 'probabilities']) || a.type !== 'choice')
      out.push(`${at}: not a choice answer (keys ${k?.join()})`);
    if (!same(keys(probs), expected.options)) out.push(`${at}: options not in criteria order`);
    // The best option's (rounded) probability is the largest and is the confidence.
    if (p && (p[a.choice as string] !== max || a.confidence !== max))
      out.push(
        `${at}: choice ${String(a.choice)} / confidence ${String(a.confidence)} is not the max`,
      );
    return;
  }
  const levels = expected.legend!.map((_, i) => String(i));
  if (!same(k, ['type', 'score', 'confidence', 'legend', 'probabilities']) || a.type !== 'score')
    out.push(`${at}: not a score answer (keys ${k?.join()})`);
  const legend = (got as Map<string, JsonValue>).get?.('legend');
  if (!same(keys(legend), levels) || !same(keys(probs), levels))
    out.push(`${at}: legend/probabilities not keyed 0..${levels.length - 1}`);
  if (!same(Object.values((plain(legend) ?? {}) as object), expected.legend))
    out.push(`${at}: legend does not echo the levels`);
  // score = sum(i * p_i) of unrounded p: rounding moves it by at most sum(i) * 0.5e-4 (+ 1e-4).
  const mean = values.reduce((s, x, i) => s + i * x, 0);
  const tolerance = (levels.length * (levels.length - 1) * 0.5e-4) / 2 + 1e-4;
  if (p && (Math.abs((a.score as number) - mean) > tolerance || a.confidence !== max))
    out.push(`${at}: score ${String(a.score)} / confidence ${String(a.confidence)} inconsistent`);
}

function checkAnswers(e: Extract<Expectation, { status: 200 }>, body: JsonValue): string[] {
  const out: string[] = [];
  const top = body as Map<string, JsonValue>;
  if (!same(keys(body), ['model', 'answers', 'usage'])) return [`keys ${keys(body)?.join()}`];
  if (top.get('model') !== e.model) out.push(`model ${String(top.get('model'))}`);
  const answers = top.get('answers') as Map<string, JsonValue>;
  if (
    !same(
      keys(answers),
      e.answers.map((x) => x.id),
    )
  ) {
    return [...out, `answer ids ${JSON.stringify(keys(answers))} not the questions' order`];
  }
  for (const expected of e.answers) checkAnswer(expected, answers.get(expected.id), out);
  const usage = plain(top.get('usage')) as Record<string, Plain>;
  if (!same(keys(top.get('usage')), ['input_tokens', 'output_tokens']) || usage.output_tokens !== 0)
    out.push(`usage ${JSON.stringify(usage)}`);
  if (!Number.isInteger(usage.input_tokens) || (usage.input_tokens as number) < 1)
    out.push(`input_tokens ${String(usage.input_tokens)}`);
  return out;
}

/** Problems with `status` + `text` as the answer to a case (over HTTP or from the route). */
export function checkResponse(
  c: FuzzCase,
  status: number,
  text: string,
  o: CheckOptions,
): string[] {
  const e = c.expect;
  const size = typeof c.body === 'string' ? Buffer.byteLength(c.body) : c.body.length;
  let body: JsonValue;
  try {
    body = parseRequestJson(text);
  } catch {
    return [`${status}: the body is not JSON: ${text.slice(0, 120)}`];
  }
  const detail = body instanceof Map ? body.get('detail') : undefined;
  const error = plain(detail) as Record<string, Plain> | null;
  const errorOk = (type: string) =>
    same(keys(body), ['detail']) &&
    same(keys(detail), ['error_type', 'message']) &&
    error?.error_type === type &&
    typeof error.message === 'string' &&
    error.message !== '';
  if (o.maxBodyBytes !== undefined && size > o.maxBodyBytes) {
    return status === 413 && errorOk('api_usage_error')
      ? []
      : [`${status} (want 413): ${text.slice(0, 200)}`];
  }
  if (e.status === 200 && status === 400 && !e.small && errorOk('max_tokens_exceeded')) {
    // `at least N`: refused from its length alone, before tokenizing (system-one.md).
    const m = /^input is (?:at least )?(\d+) tokens; the model reads at most (\d+)$/.exec(
      error!.message as string,
    );
    const ok = m !== null && Number(m[1]) > Number(m[2]) && Number(m[2]) === o.contextTokens;
    return ok ? [] : [`bad max_tokens_exceeded: ${String(error!.message)}`];
  }
  if (status !== e.status) return [`status ${status}, want ${e.status}: ${text.slice(0, 300)}`];
  if (e.status === 200) return checkAnswers(e, body);
  if (e.status === 400) {
    if (!errorOk(e.errorType)) return [`400 body ${text.slice(0, 200)}`];
    if (e.message !== undefined && error!.message !== e.message)
      return [`message ${JSON.stringify(error!.message)}, want ${JSON.stringify(e.message)}`];
    return [];
  }
  return checkIssues(e.issues, detail);
}

function checkIssues(
  expected: Extract<Expectation, { status: 422 }>['issues'],
  detail: JsonValue | undefined,
): string[] {
  if (!Array.isArray(detail)) return ['422 without a detail list'];
  const got = detail.map((d) => ({
    keys: keys(d),
    ...(plain(d) as { loc: Plain; msg: Plain; type: Plain }),
  }));
  const out: string[] = [];
  for (const g of got) {
    if (!same(g.keys, ['loc', 'msg', 'type']) || typeof g.msg !== 'string' || g.msg === '')
      out.push(`malformed issue ${JSON.stringify(g)}`);
  }
  const key = (i: { loc: unknown; type: unknown }) => JSON.stringify([i.loc, i.type]);
  const want = expected.map(key).sort();
  const have = got.map(key).sort();
  if (!same(want, have)) out.push(`issues ${JSON.stringify(have)}, want ${JSON.stringify(want)}`);
  for (const x of expected) {
    const match = got.find((g) => key(g) === key(x));
    if (match && x.msg !== undefined && match.msg !== x.msg)
      out.push(`msg ${String(match.msg)}, want ${x.msg}`);
  }
  return out;
}

/** Problems with a request validateRequest accepted, against a 200-expected case. */
export function checkValidRequest(e: Expectation, request: ValidRequest): string[] {
  if (e.status !== 200) return [`accepted, want ${e.status}`];
  const out: string[] = [];
  if (request.model !== e.model) out.push(`model ${request.model}`);
  const ids = request.questions.map((q) => q.id);
  if (
    !same(
      ids,
      e.answers.map((a) => a.id),
    )
  )
    return [...out, `question ids ${JSON.stringify(ids)}`];
  request.questions.forEach((q, i) => {
    const want = e.answers[i]!;
    if (q.type !== want.type) out.push(`${q.id}: type ${q.type}, want ${want.type}`);
    const names = q.criteria.map(([name]) => name);
    if (want.options && !same(names, want.options))
      out.push(`${q.id}: options ${JSON.stringify(names)}`);
    if (
      want.legend &&
      !same(
        q.criteria.map(([, d]) => plain(d)),
        want.legend,
      )
    )
      out.push(`${q.id}: levels differ`);
  });
  return out;
}
