/**
 * The mutations of a valid request that the fuzz generator applies, each returning the 422
 * issue system-one.md prescribes for it (loc, type, pydantic's message where fixed).
 */
import { issueAt, type ExpectedIssue } from './expect.js';
import { num, obj, type Node, type Obj } from './json-text.js';
import type { Rng } from './prng.js';
import { dropField, field, type QuestionKind, type ValidRequestSpec } from './valid.js';

export type Ctx = { rng: Rng; model: string; alias: string; transport: 'http' | 'text' };

/** Wrong values by JSON type, for the slots that refuse them. */
const WRONG: Record<string, Node[]> = {
  number: [num('1'), num('-2.5e3'), num('0'), num('1e400')],
  bool: [true, false],
  null: [null],
  string: ['text', ''],
  array: [[], [num('1')], ['a']],
  object: [obj([]), obj([['a', 'b']])],
};
export function wrongOf(rng: Rng, types: string[]): Node {
  return rng.pick(WRONG[rng.pick(types)]!);
}

export const questionsOf = (body: Obj) => field(body, 'questions') as Obj;
export const firstQuestion = (body: Obj) => questionsOf(body).obj[0]!;

/** The question-level mutations: the first question of `spec` broken one way. */
export function breakQuestion(
  c: Ctx,
  spec: ValidRequestSpec,
): { kind: string; issue: ExpectedIssue } {
  const { rng } = c;
  const entry = firstQuestion(spec.body);
  const [id] = entry;
  const q = entry[1] as Obj;
  const loc = ['body', 'questions', id];
  const type = field(q, 'type') as QuestionKind;
  const slot = rng.pick([
    'question',
    'type',
    'instructions',
    'criteria',
    'description',
    'extra',
    'missing',
  ]);
  if (slot === 'question') {
    entry[1] = wrongOf(rng, ['number', 'bool', 'null', 'string', 'array']);
    return { kind: 'wrong-type:question', issue: issueAt(loc, 'dict_type') };
  }
  if (slot === 'type') {
    q.obj[0]![1] = rng.chance(0.5)
      ? wrongOf(rng, ['number', 'bool', 'null', 'array', 'object'])
      : rng.pick(['Noul', 'bool', '', 'choice ', 'predicate']);
    return { kind: 'wrong-type:type', issue: issueAt([...loc, 'type'], 'literal_error') };
  }
  if (slot === 'instructions') {
    dropField(q, 'instructions');
    q.obj.splice(1, 0, ['instructions', wrongOf(rng, ['number', 'bool'])]);
    return {
      kind: 'wrong-type:instructions',
      issue: issueAt([...loc, 'instructions'], 'description_type'),
    };
  }
  if (slot === 'extra') {
    const name = rng.pick(['Type', 'criterion', 'options', '__proto__', '', 'constructor']);
    q.obj.push([name, rng.pick<Node>(['x', null, num('1')])]);
    return { kind: 'unknown-field:question', issue: issueAt([...loc, name], 'extra_forbidden') };
  }
  if (slot === 'missing') {
    const drop = type === 'noul' || rng.chance(0.5) ? 'type' : 'criteria';
    dropField(q, drop);
    return { kind: `missing:${drop}`, issue: issueAt([...loc, drop], 'missing') };
  }
  const criteriaLoc = [...loc, 'criteria'];
  if (slot === 'criteria' || type === 'noul') {
    dropField(q, 'criteria');
    if (type === 'score') {
      q.obj.push(['criteria', wrongOf(rng, ['number', 'bool', 'null', 'string', 'object'])]);
      return { kind: 'wrong-type:criteria', issue: issueAt(criteriaLoc, 'list_type') };
    }
    const types =
      type === 'choice'
        ? ['number', 'bool', 'null', 'string', 'array']
        : ['number', 'bool', 'string', 'array'];
    if (type === 'noul' && rng.chance(0.4)) {
      const key = rng.pick(['yes', 'True', 'no', '1', '']);
      q.obj.push([
        'criteria',
        obj([
          ['true', 'yes'],
          [key, 'x'],
        ]),
      ]);
      return {
        kind: 'unknown-field:noul-criteria',
        issue: issueAt([...criteriaLoc, key], 'extra_forbidden'),
      };
    }
    if (type === 'noul' && rng.chance(0.4)) {
      const key = rng.pick(['true', 'false']);
      q.obj.push(['criteria', obj([[key, wrongOf(rng, ['number', 'bool'])]])]);
      return {
        kind: 'wrong-type:noul-description',
        issue: issueAt([...criteriaLoc, key], 'description_type'),
      };
    }
    q.obj.push(['criteria', wrongOf(rng, types)]);
    return { kind: 'wrong-type:criteria', issue: issueAt(criteriaLoc, 'dict_type') };
  }
  // A description (choice option value / score level) of the wrong type.
  const criteria = field(q, 'criteria')!;
  const bad = wrongOf(rng, ['number', 'bool']);
  if (Array.isArray(criteria)) {
    const at = rng.int(0, criteria.length - 1);
    criteria[at] = bad;
    return {
      kind: 'wrong-type:description',
      issue: issueAt([...criteriaLoc, at], 'description_type'),
    };
  }
  const option = (criteria as Obj).obj[rng.int(0, (criteria as Obj).obj.length - 1)]!;
  option[1] = bad;
  return {
    kind: 'wrong-type:description',
    issue: issueAt([...criteriaLoc, option[0]], 'description_type'),
  };
}

/** Top-level mutations; each returns its issue. Independent of each other and of breakQuestion. */
export const TOP: Record<string, (c: Ctx, body: Obj) => ExpectedIssue> = {
  model: (c, body) => {
    body.obj[0]![1] = wrongOf(c.rng, ['number', 'bool', 'null', 'array', 'object']);
    return issueAt(['body', 'model'], 'string_type');
  },
  state: (c, body) => {
    body.obj[1]![1] = wrongOf(c.rng, ['number', 'bool', 'null']);
    return issueAt(['body', 'state'], 'state_type');
  },
  extra: (c, body) => {
    const name = c.rng.pick([
      'modle',
      'temperature',
      'Model',
      '__proto__',
      'constructor',
      '',
      'stream',
    ]);
    body.obj.splice(c.rng.int(0, body.obj.length), 0, [
      name,
      c.rng.pick<Node>(['x', num('0.7'), true, null]),
    ]);
    return issueAt(['body', name], 'extra_forbidden');
  },
  missing: (c, body) => {
    const name = c.rng.pick(['model', 'state']);
    dropField(body, name);
    return issueAt(['body', name], 'missing');
  },
};
