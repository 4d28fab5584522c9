/**
 * The OpenAI Decisions `input` and question `instructions`, checked and turned into what Clef
 * reads (a System One `state` / `instructions`).
 *
 * - `input` a string: the state is that string, as it is.
 * - `input` an array of messages: the state is that JSON array, each message with its members
 *   as written (role, content, type, phase), so the model reads roles and contents. The one
 *   thing dropped is `prompt_cache_breakpoint` on a content part: a caching hint, not content.
 * - Content parts Clef can read: `input_text`, `input_json` (its `data` stays JSON), an
 *   assistant's `output_text` and `refusal` (text the assistant wrote). Images (`input_image`)
 *   and any file or audio part: 400 `unsupported_value` at that part. Function calls, custom
 *   tool calls and their outputs: 400 `unsupported_value` at that item (Clef has no tools).
 * - `instructions` a string: as it is. An array of parts: the JSON array of parts as written,
 *   except a lone `input_text` part, which is its text. Empty instructions (`""`, `[]`): 400,
 *   since Clef would read the question's id in their place.
 */
import type { JsonMap, JsonValue } from '../protocol/types.js';
import { at, Checker, fieldsOf, index, type Fields } from './openai-check.js';

const ROLES = ['user', 'developer', 'system', 'assistant'] as const;
type Role = (typeof ROLES)[number];
const TOOL_ITEMS = [
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
];
/** Part types that carry something other than text or JSON. */
const NON_TEXT_PARTS = ['input_image', 'input_file', 'input_audio', 'image_url', 'file'];
const PARTS_OF: Record<Role, readonly string[]> = {
  user: ['input_text', 'input_json'],
  developer: ['input_text'],
  system: ['input_text'],
  assistant: ['output_text', 'refusal'],
};
/** A part's members: its type, the member holding its content, and optional extras. */
const PART_FIELDS: Record<string, readonly string[]> = {
  input_text: ['type', 'text', 'prompt_cache_breakpoint'],
  input_json: ['type', 'data'],
  output_text: ['type', 'text'],
  refusal: ['type', 'refusal'],
};

function mapOf(fields: Fields, skip?: string): JsonMap {
  const out: JsonMap = new Map();
  for (const [k, v] of fields) if (k !== skip) out.set(k, v as JsonValue);
  return out;
}

function checkBreakpoint(v: unknown, param: string, c: Checker): void {
  if (v === undefined || v === null) return;
  const f = c.object(v, param);
  if (f === undefined) return;
  c.keys(f, ['mode'], param);
  if (c.required(f, 'mode', param) && f.get('mode') !== 'explicit') {
    c.invalidValue(at(param, 'mode'), "expected 'explicit'");
  }
}

function checkJsonData(v: unknown, param: string, c: Checker): void {
  if (fieldsOf(v) !== undefined) return;
  if (Array.isArray(v) && v.every((x) => fieldsOf(x) !== undefined)) return;
  c.invalidType(param, 'an object or an array of objects', v);
}

/** One content part, checked against the parts `allowed` here; the part Clef reads, or undefined. */
function part(v: unknown, allowed: readonly string[], where: string, param: string, c: Checker) {
  const f = c.object(v, param);
  if (f === undefined) return undefined;
  const type = f.get('type');
  if (typeof type === 'string' && NON_TEXT_PARTS.includes(type)) {
    c.unsupported(param, `Clef reads text and JSON only, not ${type} parts`);
    return undefined;
  }
  if (typeof type !== 'string' || !allowed.includes(type)) {
    if (c.required(f, 'type', param)) {
      c.invalidValue(
        at(param, 'type'),
        `${where} accepts ${allowed.map((t) => `'${t}'`).join(', ')}`,
      );
    }
    return undefined;
  }
  const fields = PART_FIELDS[type]!;
  c.keys(f, fields, param);
  const member = fields[1]!;
  if (c.required(f, member, param)) {
    if (type === 'input_json') checkJsonData(f.get(member), at(param, member), c);
    else c.string(f.get(member), at(param, member));
  }
  if (type === 'input_text')
    checkBreakpoint(f.get('prompt_cache_breakpoint'), at(param, 'prompt_cache_breakpoint'), c);
  return mapOf(f, 'prompt_cache_breakpoint');
}

function content(v: unknown, role: Role, param: string, c: Checker): JsonValue | undefined {
  if (typeof v === 'string') return v;
  if (!Array.isArray(v)) {
    c.invalidType(param, 'a string or an array of content parts', v);
    return undefined;
  }
  return v.map((p, i) => part(p, PARTS_OF[role], `a ${role} message`, index(param, i), c) ?? null);
}

function message(v: unknown, param: string, c: Checker): JsonMap | undefined {
  const f = c.object(v, param);
  if (f === undefined) return undefined;
  const type = f.get('type');
  if (typeof type === 'string' && TOOL_ITEMS.includes(type)) {
    c.unsupported(
      param,
      `Clef has no tools, so it cannot read a ${type} item; describe what matters in a message`,
    );
    return undefined;
  }
  if (type !== undefined && type !== 'message') {
    c.invalidValue(at(param, 'type'), "expected 'message' or an item Clef can read");
    return undefined;
  }
  const hasRole = c.required(f, 'role', param);
  if (!c.required(f, 'content', param) || !hasRole) return undefined;
  const role = f.get('role');
  if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) {
    c.invalidValue(at(param, 'role'), `expected one of ${ROLES.map((r) => `'${r}'`).join(', ')}`);
    return undefined;
  }
  c.keys(
    f,
    role === 'assistant' ? ['role', 'content', 'type', 'phase'] : ['role', 'content', 'type'],
    param,
  );
  c.optionalOneOf(f, 'phase', ['commentary', 'final_answer'], param);
  const body = content(f.get('content'), role as Role, at(param, 'content'), c);
  const out = mapOf(f);
  if (body !== undefined) out.set('content', body);
  return out;
}

/** The System One state for a Decisions `input` (see the header), or undefined after reporting. */
export function inputToState(v: unknown, c: Checker): JsonValue | undefined {
  if (typeof v === 'string') return v;
  if (!Array.isArray(v)) {
    c.invalidType('input', 'a string or an array of messages', v);
    return undefined;
  }
  const before = c.problems.length;
  const messages = v.map((m, i) => message(m, index('input', i), c) ?? null);
  return c.problems.length === before ? messages : undefined;
}

/** A question's instructions as Clef reads them (see the header), or undefined after reporting. */
export function instructionsValue(v: unknown, param: string, c: Checker): JsonValue | undefined {
  if (typeof v === 'string') {
    if (v !== '') return v;
  } else if (!Array.isArray(v)) {
    c.invalidType(param, 'a string or an array of content parts', v);
    return undefined;
  } else if (v.length > 0) {
    const before = c.problems.length;
    const parts = v.map((p, i) =>
      part(p, ['input_text', 'input_json'], 'instructions', index(param, i), c),
    );
    if (c.problems.length !== before) return undefined;
    const only = parts.length === 1 ? parts[0]! : undefined;
    const text = only?.get('type') === 'input_text' ? (only.get('text') as string) : undefined;
    if (text === undefined) return parts as JsonMap[];
    if (text !== '') return text;
  }
  c.invalidValue(param, 'instructions must not be empty (Clef would read the question id instead)');
  return undefined;
}
