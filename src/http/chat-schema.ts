/**
 * A Chat Completions `response_format.json_schema.schema` whose every leaf is a decision, turned
 * into System One questions, and the chosen values written back as JSON text valid against it.
 *
 * Leaves (one question each, in schema order, depth first):
 * - `{"type":"string","enum":[...]}` (or an `enum` of strings without `type`), 2–255 distinct
 *   strings → `choice`, the option ids being the enum's strings; the answer is System One's
 *   `choice`.
 * - `{"type":"boolean"}` → `noul`; the answer is `true` when P(yes) ≥ 0.5 (yes wins a tie, as the
 *   first option does in a choice), read from the 4-decimal probability the response carries.
 * - `{"type":"integer"}` with `minimum`/`maximum` (or exclusive bounds) spanning 2–10 integers →
 *   `score`, level i being the integer min+i (its description is that integer as text); the
 *   answer is the most probable level (the first on a tie), not the expected value, so it is an
 *   integer in range and the greedy, temperature-0 pick.
 * - `{"type":"object","properties":{...}}` nests; leaves get dotted ids (`customer.tier`). A leaf
 *   whose path has a segment outside `A-Z a-z 0-9 _ -`, or is longer than 100 characters, gets
 *   `field_<n>` (its leaf index) instead. Instructions: `<dotted name>: <description or title>`,
 *   or the dotted name alone.
 * - `required`: every property is decided and written, required or not, so a required one is
 *   always there and an optional one is there too (always valid). `required` naming a property
 *   that does not exist cannot be satisfied: 400. `additionalProperties` needs nothing: only
 *   the schema's own properties are written.
 * Refused with 400 (a problem per leaf, listed together): a free string, numbers, arrays, null,
 * type unions, `anyOf`/`oneOf`/`allOf`/`$ref`/`const`/`format`/`pattern` and any other keyword
 * that would constrain a value (annotations — description, title, $comment, default, examples
 * — are fine), more leaves than the model answers (64), a root that is not an object.
 */
import type { JsonMap, JsonValue, ModelLimits } from '../protocol/types.js';
import { at, Checker, fieldsOf, numberOf, type Fields } from './openai-check.js';

export type SchemaNode =
  | { kind: 'object'; properties: Array<[string, SchemaNode]> }
  | { kind: 'enum'; id: string; values: string[] }
  | { kind: 'boolean'; id: string }
  | { kind: 'integer'; id: string; min: number; max: number };

const ANNOTATIONS = ['description', 'title', '$comment', 'default', 'examples'];
const ID_SEGMENT = /^[A-Za-z0-9_-]+$/;
const MAX_DEPTH = 32;
export const DECISION_CODE = 'decision_schema_required';

interface Leaf {
  path: string[];
  node: Exclude<SchemaNode, { kind: 'object' }>;
  text: string | undefined;
}

class Walker {
  readonly leaves: Leaf[] = [];
  constructor(
    private readonly c: Checker,
    private readonly limits: ModelLimits,
  ) {}

  private refuse(param: string, why: string): undefined {
    this.c.add(param, DECISION_CODE, `Unsupported schema at '${param}': ${why}.`);
    return undefined;
  }

  private keywords(f: Fields, allowed: readonly string[], param: string): boolean {
    const extra = [...f.keys()].filter((k) => !allowed.includes(k) && !ANNOTATIONS.includes(k));
    if (extra.length === 0) return true;
    this.refuse(param, `this adapter cannot guarantee ${extra.map((k) => `'${k}'`).join(', ')}`);
    return false;
  }

  node(v: unknown, path: string[], param: string): SchemaNode | undefined {
    const f = fieldsOf(v);
    if (f === undefined) return this.refuse(param, 'a schema must be an object');
    if (path.length > MAX_DEPTH)
      return this.refuse(param, `nested deeper than ${MAX_DEPTH} levels`);
    const type = f.get('type');
    const enumValues = f.get('enum');
    const text = [f.get('description'), f.get('title')].find(
      (x): x is string => typeof x === 'string' && x !== '',
    );
    if (type === 'object') return this.object(f, path, param);
    if (type === 'string' || (type === undefined && Array.isArray(enumValues))) {
      if (enumValues === undefined)
        return this.refuse(param, 'a free-text string needs generated text; give it an enum');
      if (!this.keywords(f, ['type', 'enum'], param)) return undefined;
      return this.enumLeaf(enumValues, path, at(param, 'enum'), text);
    }
    if (type === 'boolean') {
      if (!this.keywords(f, ['type'], param)) return undefined;
      return this.leaf({ kind: 'boolean', id: '' }, path, text);
    }
    if (type === 'integer') return this.integer(f, path, param, text);
    if (type === 'number')
      return this.refuse(
        param,
        'a number is not a decision; use an integer with minimum and maximum',
      );
    if (type === 'array')
      return this.refuse(param, 'an array is not a decision; use an object of decisions');
    return this.refuse(param, `type ${JSON.stringify(type ?? null)} is not a decision`);
  }

  private leaf(node: Leaf['node'], path: string[], text: string | undefined): Leaf['node'] {
    this.leaves.push({ path, node, text });
    return node;
  }

  private object(f: Fields, path: string[], param: string): SchemaNode | undefined {
    if (!this.keywords(f, ['type', 'properties', 'required', 'additionalProperties'], param))
      return undefined;
    const props = f.has('properties')
      ? this.c.object(f.get('properties'), at(param, 'properties'))
      : new Map<string, unknown>();
    if (props === undefined) return undefined;
    const required = f.get('required') ?? [];
    if (!Array.isArray(required) || !required.every((r) => typeof r === 'string')) {
      this.c.invalidType(at(param, 'required'), 'an array of strings', required);
    } else {
      for (const r of required as string[]) {
        if (!props.has(r))
          this.refuse(at(param, 'required'), `'${r}' is required but not among the properties`);
      }
    }
    const properties: Array<[string, SchemaNode]> = [];
    for (const [name, schema] of props) {
      const node = this.node(schema, [...path, name], at(at(param, 'properties'), name));
      if (node !== undefined) properties.push([name, node]);
    }
    return { kind: 'object', properties };
  }

  private enumLeaf(v: unknown, path: string[], param: string, text: string | undefined) {
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) {
      return this.refuse(param, 'only an enum of strings is a choice');
    }
    const values = v as string[];
    if (new Set(values).size !== values.length)
      return this.refuse(param, 'enum values must be distinct');
    const { minChoiceOptions: min, maxChoiceOptions: max } = this.limits;
    if (values.length < min || values.length > max) {
      return this.refuse(param, `a choice needs ${min} to ${max} values, not ${values.length}`);
    }
    return this.leaf({ kind: 'enum', id: '', values }, path, text);
  }

  private integer(f: Fields, path: string[], param: string, text: string | undefined) {
    if (
      !this.keywords(
        f,
        ['type', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'],
        param,
      )
    )
      return undefined;
    const bound = (key: string, round: (x: number) => number, shift: number) => {
      const n = numberOf(f.get(key));
      return n === undefined || !Number.isFinite(n)
        ? undefined
        : Number.isInteger(n)
          ? n + shift
          : round(n);
    };
    const lows = [bound('minimum', Math.ceil, 0), bound('exclusiveMinimum', Math.ceil, 1)];
    const highs = [bound('maximum', Math.floor, 0), bound('exclusiveMaximum', Math.floor, -1)];
    const lo = lows.filter((x) => x !== undefined);
    const hi = highs.filter((x) => x !== undefined);
    if (lo.length === 0 || hi.length === 0) {
      return this.refuse(param, 'an integer is a decision only with a minimum and a maximum');
    }
    const min = Math.max(...lo);
    const max = Math.min(...hi);
    const count = max - min + 1;
    const { minScoreLevels: least, maxScoreLevels: most } = this.limits;
    if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || count < least || count > most) {
      return this.refuse(
        param,
        `an integer range is a decision with ${least} to ${most} values, not ${Math.max(count, 0)}`,
      );
    }
    return this.leaf({ kind: 'integer', id: '', min, max }, path, text);
  }
}

function leafIds(leaves: Leaf[]): string[] {
  const natural = leaves.map((l) => {
    const id = l.path.join('.');
    return l.path.every((s) => ID_SEGMENT.test(s)) && id.length <= 100 ? id : undefined;
  });
  const used = new Set(natural.filter((x): x is string => x !== undefined));
  return natural.map((id, n) => {
    if (id !== undefined) return id;
    let generated = `field_${n}`;
    for (let k = 1; used.has(generated); k++) generated = `field_${n}_${k}`;
    used.add(generated);
    return generated;
  });
}

function question(leaf: Leaf): JsonMap {
  const name = leaf.path.join('.');
  const q: JsonMap = new Map<string, JsonValue>();
  const node = leaf.node;
  q.set('type', node.kind === 'boolean' ? 'noul' : node.kind === 'enum' ? 'choice' : 'score');
  q.set('instructions', leaf.text === undefined ? name : `${name}: ${leaf.text}`);
  if (node.kind === 'enum') q.set('criteria', new Map(node.values.map((v) => [v, null])));
  if (node.kind === 'integer') {
    q.set(
      'criteria',
      Array.from({ length: node.max - node.min + 1 }, (_, i) => String(node.min + i)),
    );
  }
  return q;
}

/** The schema tree and its questions (a Map, in schema order), or undefined after reporting. */
export function schemaQuestions(
  schema: unknown,
  param: string,
  limits: ModelLimits,
  c: Checker,
): { root: SchemaNode; questions: JsonMap } | undefined {
  const walker = new Walker(c, limits);
  const before = c.problems.length;
  const f = fieldsOf(schema);
  if (f !== undefined && f.get('type') !== 'object') {
    c.add(
      param,
      DECISION_CODE,
      `Unsupported schema at '${param}': the root must be an object schema.`,
    );
    return undefined;
  }
  const root = walker.node(schema, [], param);
  const leaves = walker.leaves;
  if (c.problems.length === before && leaves.length === 0) {
    c.add(param, DECISION_CODE, `Unsupported schema at '${param}': it has no decision to make.`);
  }
  if (leaves.length > limits.maxQuestions) {
    c.add(
      param,
      DECISION_CODE,
      `Unsupported schema at '${param}': this model makes at most ${limits.maxQuestions} decisions per request, and the schema has ${leaves.length}.`,
    );
  }
  if (c.problems.length !== before || root === undefined) return undefined;
  const questions: JsonMap = new Map();
  leafIds(leaves).forEach((id, n) => {
    const leaf = leaves[n]!;
    leaf.node.id = id;
    questions.set(id, question(leaf));
  });
  return { root, questions };
}
