// custom-elements.json (the Custom Elements Manifest) lets Vue, Svelte and editors see
// the elements, their attributes and events. It is generated from the elements' source; these
// tests pin what it says and that the React typings (types/react.d.ts) and the event map agree.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { customElementsManifest, litAttributes } from '../../../tools/build/custom-elements.mjs';

const read = (name: string) => readFileSync(join('src/element/clef-decide', name), 'utf8');
const manifest = customElementsManifest(read);
const declarations = manifest.modules[0]!.declarations;
const byTag = (tag: string) => declarations.find((d) => d.tagName === tag)!;
const names = (items: Array<{ name: string }> | undefined) => (items ?? []).map((i) => i.name);

describe('custom-elements.json', () => {
  it('declares every element the package defines, each exported as a definition', () => {
    expect(declarations.map((d) => [d.tagName, d.name])).toEqual([
      ['clef-choice', 'ClefChoice'],
      ['clef-option', 'ClefOption'],
      ['clef-noul', 'ClefNoul'],
      ['clef-score', 'ClefScore'],
      ['clef-level', 'ClefLevel'],
      ['clef-decide', 'ClefDecide'],
    ]);
    expect(manifest.modules[0]!.exports.map((e) => e.name)).toEqual(
      declarations.map((d) => d.tagName),
    );
  });

  it("has <clef-decide>'s attributes (HTML names, types, descriptions), events, slots, parts", () => {
    const decide = byTag('clef-decide');
    expect(decide.attributes.map((a) => [a.name, a.type.text])).toEqual([
      ['model', 'string'],
      ['model-name', 'string'],
      ['device', 'string'],
      ['state', 'string'],
      ['for', 'string'],
      ['debounce', 'number'],
      ['label', 'string'],
      ['calibrated', 'boolean'],
      ['abstain-below', 'number'],
      ['record', 'boolean'],
      ['shared', 'boolean'],
    ]);
    for (const a of decide.attributes) expect(a.description, a.name).not.toBe('');
    expect(names(decide.events)).toEqual(['clef-decision', 'clef-error', 'clef-progress']);
    expect(names(decide.slots)).toEqual(['header', 'empty', 'answer-{id}', 'footer']);
    expect(names(decide.cssParts)).toContain('answer');
    expect(names(decide.cssProperties)).toContain('--clef-bar-color');
  });

  it("has the children's attributes from their @attr tags", () => {
    expect(names(byTag('clef-choice').attributes)).toEqual(['name', 'instructions']);
    expect(names(byTag('clef-option').attributes)).toEqual(['value']);
    expect(names(byTag('clef-noul').attributes)).toEqual(['name', 'instructions', 'yes', 'no']);
    expect(names(byTag('clef-score').attributes)).toEqual(['name', 'instructions']);
    expect(byTag('clef-level').attributes).toEqual([]);
  });

  it('follows the source: a new Lit property is a new attribute; state and attribute:false are not', () => {
    const source = `
  static override properties = {
    model: { type: String },
    tone: { type: String, attribute: 'tone-name' },
    hidden2: { attribute: false },
    _busy: { state: true },
  };
  /** The tone. */
  declare tone: string;`;
    expect(litAttributes(source).map((a) => [a.name, a.fieldName, a.description])).toEqual([
      ['model', 'model', ''],
      ['tone-name', 'tone', 'The tone.'],
    ]);
  });

  it('agrees with the React typings and the event map', () => {
    const react = readFileSync('types/react.d.ts', 'utf8');
    const block = /interface ClefDecideAttributes \{([\s\S]*?)\n\}/.exec(react)![1]!;
    const typed = [...block.matchAll(/^\s*'?([\w-]+)'?\?:/gm)].map((m) => m[1]);
    expect(typed).toEqual(names(byTag('clef-decide').attributes));
    const events = read('events.ts');
    const mapped = [...events.matchAll(/^\s*'(clef-[a-z]+)': Clef\w+Event;/gm)].map((m) => m[1]);
    expect(mapped).toEqual(names(byTag('clef-decide').events));
  });
});
