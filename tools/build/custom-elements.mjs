#!/usr/bin/env node
// `node tools/build/custom-elements.mjs [out]`: writes the package's custom-elements.json (the
// Custom Elements Manifest, schema 2.1.0) from the elements' source, so Vue, Svelte, Lit tooling
// and editors see <clef-decide>, its children, their attributes, events, slots, parts and CSS
// properties. Read from the same JSDoc tags the source documents them with (@attr, @event,
// @slot, @csspart, @cssprop) and from ClefDecide's Lit `properties`: it cannot drift from them.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ELEMENT_DIR = 'src/element/clef-decide';
/** Where the elements are defined, as the package exports them (`clef-web/element`). */
const MODULE = 'dist/lib/element.js';

/** The tag and class of each element, from define.ts's list. */
export function tagsOf(defineSource) {
  return [...defineSource.matchAll(/\['(clef-[a-z]+)',\s*(Clef[A-Za-z]+)\]/g)].map((m) => ({
    tagName: m[1],
    className: m[2],
  }));
}

/** The JSDoc block right above `export class <name>`, or null. */
function docAbove(source, className) {
  const at = source.indexOf(`export class ${className} `);
  if (at < 0) return null;
  const end = source.lastIndexOf('*/', at);
  const start = source.lastIndexOf('/**', end);
  if (end < 0 || start < 0 || source.slice(end + 2, at).trim() !== '') return null;
  return source
    .slice(start + 3, end)
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, ''));
}

/** A JSDoc block as its description and its tags (continuation lines joined). */
export function parseDoc(lines) {
  const description = [];
  const tags = [];
  for (const line of lines) {
    const tag = /^@(\w+)\s*(.*)$/.exec(line.trim());
    if (tag) tags.push({ tag: tag[1], text: tag[2] });
    else if (tags.length > 0 && line.trim() !== '') tags.at(-1).text += ` ${line.trim()}`;
    else if (tags.length === 0) description.push(line.trim());
  }
  return { description: description.join(' ').replace(/\s+/g, ' ').trim(), tags };
}

/** `name - text` as `{ name, description }`. */
function named(text) {
  const m = /^(\S+)\s*-\s*(.*)$/.exec(text);
  return m ? { name: m[1], description: m[2] } : { name: text.trim(), description: '' };
}

/** The one-block doc comment right above `declare <field>:`, as one line ('' when none). */
function fieldDoc(source, field) {
  const at = source.indexOf(`declare ${field}:`);
  const end = source.lastIndexOf('*/', at);
  const start = source.lastIndexOf('/**', end);
  if (at < 0 || end < 0 || start < 0 || source.slice(end + 2, at).trim() !== '') return '';
  return source
    .slice(start + 3, end)
    .replace(/\s*\n\s*\*\s*/g, ' ')
    .trim();
}

/** ClefDecide's attributes from its Lit `properties` and the doc comments of its fields. */
export function litAttributes(source) {
  const block = /static override properties = \{([\s\S]*?)\n {2}\};/.exec(source);
  if (!block) throw new Error('custom-elements: no `static override properties` in ClefDecide');
  const attributes = [];
  for (const m of block[1].matchAll(/^\s*(\w+): \{([^}]*)\}/gm)) {
    const [, field, options] = m;
    if (/state: true|attribute: false/.test(options)) continue;
    const attribute = /attribute: '([^']+)'/.exec(options)?.[1] ?? field.toLowerCase();
    const type = /type: (String|Number|Boolean)/.exec(options)?.[1]?.toLowerCase() ?? 'string';
    const description = fieldDoc(source, field);
    attributes.push({ name: attribute, fieldName: field, type: { text: type }, description });
  }
  return attributes;
}

/** The manifest for the sources given (file name -> text under src/element/clef-decide). */
export function customElementsManifest(read) {
  const sources = ['clef-decide.ts', 'question-elements.ts'].map(read);
  const declarations = [];
  for (const { tagName, className } of tagsOf(read('define.ts'))) {
    const source = sources.find((s) => s.includes(`export class ${className} `));
    const lines = source && docAbove(source, className);
    if (!lines) throw new Error(`custom-elements: no doc comment on ${className}`);
    const { description, tags } = parseDoc(lines);
    const all = (tag) => tags.filter((t) => t.tag === tag).map((t) => named(t.text));
    const declaration = { kind: 'class', name: className, tagName, customElement: true };
    declaration.description = description;
    const summary = tags.find((t) => t.tag === 'summary');
    if (summary) declaration.summary = summary.text;
    declaration.attributes =
      className === 'ClefDecide'
        ? litAttributes(source)
        : all('attr').map((a) => ({ ...a, type: { text: 'string' } }));
    const events = all('event').map((e) => ({ ...e, type: { text: 'CustomEvent' } }));
    if (events.length) declaration.events = events;
    for (const [tag, key] of [
      ['slot', 'slots'],
      ['csspart', 'cssParts'],
      ['cssprop', 'cssProperties'],
    ]) {
      const items = all(tag);
      if (items.length) declaration[key] = items;
    }
    declarations.push(declaration);
  }
  return {
    schemaVersion: '2.1.0',
    readme: 'README.md',
    modules: [
      {
        kind: 'javascript-module',
        path: MODULE,
        declarations,
        exports: declarations.map((d) => ({
          kind: 'custom-element-definition',
          name: d.tagName,
          declaration: { name: d.name, module: MODULE },
        })),
      },
    ],
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = resolve(ROOT, process.argv[2] ?? 'dist/custom-elements.json');
  const manifest = customElementsManifest((name) =>
    readFileSync(resolve(ROOT, ELEMENT_DIR, name), 'utf8'),
  );
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(manifest, null, 2)}\n`);
  console.log(`wrote ${out}`);
}
