// The playground's pure pieces: the log's JSONL format and the question builder's JSON.
import { describe, expect, it } from 'vitest';
import { parseRequestJson } from '../../../src/protocol/json.js';
import {
  compactJson,
  exportFileName,
  prettyJson,
  toJsonl,
  type LogEntry,
} from '../../../src/playground/log-format.js';
import { buildRecord, parseRecord } from '../../../src/core/record.js';
import {
  formToRequestText,
  freshId,
  newQuestion,
  rawStateText,
  requestTextToForm,
  type FormState,
} from '../../../src/playground/request-form.js';

const timings = {
  encodeMs: 1,
  backboneMs: 2,
  headMs: 3,
  totalMs: 7,
  prefixHit: false,
  backboneTokens: 10,
};

describe('compactJson and prettyJson', () => {
  it('strip and add whitespace only outside strings', () => {
    const text = '{ "a b" : [1.0, "x\\" y", {} , [ ]],\n "2": "\\\\"}';
    expect(compactJson(text)).toBe('{"a b":[1.0,"x\\" y",{},[]],"2":"\\\\"}');
    expect(prettyJson(text)).toBe(
      '{\n  "a b": [\n    1.0,\n    "x\\" y",\n    {},\n    []\n  ],\n  "2": "\\\\"\n}',
    );
    // Same value both ways; the lexeme 1.0 and the key order are kept.
    expect(JSON.parse(prettyJson(text))).toEqual(JSON.parse(text));
    expect(prettyJson(text).indexOf('"a b"')).toBeLessThan(prettyJson(text).indexOf('"2"'));
  });
});

describe('toJsonl', () => {
  it('writes each entry as its decision record, the request lossless; entries without one are left out', () => {
    const requestText =
      '{\n  "model": "clef-tiny",\n  "state": {"n": 1.0},\n  "questions": {"2": {"type": "noul"}, "a": {"type": "noul"}}\n}';
    const response = {
      model: 'clef-tiny',
      answers: { '2': { type: 'noul' as const, noul: 0.5 } },
      usage: { input_tokens: 3, output_tokens: 0 as const },
    };
    const record = buildRecord({
      source: {
        surface: 'playground',
        model: 'clef-tiny',
        manifestSha256: 'ab'.repeat(32),
        calibrationSha256: null,
        device: 'wasm',
        runtime: 'onnxruntime-web/wasm',
      },
      request: parseRequestJson(requestText),
      requestSha256: 'cd'.repeat(32),
      requestSha256Only: false,
      response,
      timings: { total_ms: 5 },
      time: new Date('2026-11-30T10:00:00.000Z'),
    });
    const entry: LogEntry = {
      time: '2026-11-30T10:00:00.000Z',
      model: 'clef-tiny',
      packageUrl: 'http://localhost/models/tiny/',
      packageSha256: 'ab'.repeat(32),
      device: 'wasm',
      request: requestText,
      response: JSON.stringify(response),
      timings,
    };
    const text = toJsonl([entry, { ...entry, record }, { ...entry, record }]);
    const lines = text.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
    const parsed = parseRecord(lines[0]!);
    expect(parsed.package.manifest_sha256).toBe('ab'.repeat(32));
    expect(parsed.engine.device).toBe('wasm');
    expect(parsed.response).toEqual(response);
    // Written order ("2" before "a", which a JS object would reorder anyway) and the lexeme 1.0.
    expect(lines[0]).toContain(
      '"request":{"model":"clef-tiny","state":{"n":1.0},"questions":{"2":',
    );
  });

  it('names the export after the local time', () => {
    expect(exportFileName(new Date(2026, 10, 30, 9, 5, 7))).toBe(
      'clef-decisions-20261130-090507.jsonl',
    );
  });
});

describe('the question builder', () => {
  const form: FormState = {
    model: 'clef-tiny',
    stateMode: 'text',
    stateText: 'Card charged "twice"',
    questions: [
      {
        ...newQuestion('choice', '10'),
        instructions: 'Route it',
        options: [
          { name: 'b', description: '' },
          { name: 'a', description: 'A team' },
        ],
      },
      { ...newQuestion('noul', 'urgent'), yes: 'today', no: '' },
      { ...newQuestion('score', 'sev'), levels: ['low', ''] },
    ],
  };

  it('writes the request in form order, empty descriptions as null', () => {
    const text = formToRequestText(form);
    expect(JSON.parse(text)).toEqual({
      model: 'clef-tiny',
      state: 'Card charged "twice"',
      questions: {
        '10': { type: 'choice', instructions: 'Route it', criteria: { b: null, a: 'A team' } },
        urgent: { type: 'noul', criteria: { true: 'today' } },
        sev: { type: 'score', criteria: ['low', null] },
      },
    });
    // An integer-like id stays first in the text (a JS object could not keep "b" before "a"
    // either; parseRequestJson keeps the written order).
    const parsed = parseRequestJson(text) as Map<string, unknown>;
    expect([...(parsed.get('questions') as Map<string, unknown>).keys()]).toEqual([
      '10',
      'urgent',
      'sev',
    ]);
  });

  it('embeds a JSON state as typed and refuses one that does not parse', () => {
    const json = { ...form, stateMode: 'json' as const, stateText: '{"amount": 1.0, "b": [1, 2]}' };
    const text = formToRequestText(json);
    expect(text).toContain('"amount": 1.0');
    expect(JSON.parse(text).state).toEqual({ amount: 1, b: [1, 2] });
    expect(() => formToRequestText({ ...json, stateText: '{"a": }' })).toThrow(SyntaxError);
  });

  it('reads a request back into the form, or says why it cannot', () => {
    const back = requestTextToForm(formToRequestText(form));
    expect('form' in back && back.form).toEqual(form);
    const objectDescription = requestTextToForm(
      '{"model":"m","state":"s","questions":{"q":{"type":"choice","criteria":{"a":{"x":1},"b":null}}}}',
    );
    expect(objectDescription).toEqual({
      reason: 'question q: option a has a non-text description',
    });
    const jsonState = requestTextToForm('{"model":"m","state":{"n":1.0},"questions":{}}');
    expect('form' in jsonState && jsonState.form.stateText).toBe('{"n":1.0}');
  });

  it('finds the state text as written', () => {
    expect(rawStateText('{"model":"m","state": [1.0, {"a":"}"}] ,"questions":{}}')).toBe(
      '[1.0, {"a":"}"}]',
    );
    expect(rawStateText('{"questions":{"state":1},"state":{"x":2.50}}')).toBe('{"x":2.50}');
    expect(rawStateText('{"model":"state","state":3}')).toBe('3');
  });

  it('picks unused ids', () => {
    expect(
      freshId([newQuestion('choice', 'choice'), newQuestion('choice', 'choice_2')], 'choice'),
    ).toBe('choice_3');
  });
});
