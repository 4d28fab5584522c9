/**
 * `<clef-decide>` warns (once per element and name) about an attribute it does not know, naming
 * the nearest one it does: `<clef-decide modle="...">` would otherwise load the default model
 * without a word. HTML's global attributes, `data-*`, `aria-*`, event handlers, and the marks
 * frameworks leave (names with `:`, `@`, `.` or `_`, and their `x-`, `hx-`, `ng-`, `v-`
 * prefixes) are not warned about.
 */
import { unknownNames } from '../../core/option-names.js';

const GLOBAL_ATTRIBUTES = new Set(
  (
    'accesskey autocapitalize autocorrect autofocus class contenteditable dir draggable ' +
    'enterkeyhint exportparts hidden id inert inputmode is itemid itemprop itemref itemscope ' +
    'itemtype lang nonce part popover role slot spellcheck style tabindex title translate ' +
    'virtualkeyboardpolicy writingsuggestions'
  ).split(' '),
);

const CONVENTION = /^(data-|aria-|on|x-|hx-|ng-|v-)|[^a-z0-9-]/;

/** The attribute names of Lit `properties` (state and `attribute: false` ones have none). */
export function attributeNames(properties: Record<string, object>): string[] {
  const names: string[] = [];
  for (const [name, options] of Object.entries(properties)) {
    const { attribute, state } = options as { attribute?: unknown; state?: unknown };
    if (state || attribute === false) continue;
    names.push(typeof attribute === 'string' ? attribute : name.toLowerCase());
  }
  return names;
}

const warned = new WeakMap<Element, Set<string>>();

/** console.warn for each unknown attribute of `element` (its own are `properties`'). */
export function warnUnknownAttributes(element: Element, properties: Record<string, object>): void {
  const own = attributeNames(properties);
  const candidates = element
    .getAttributeNames()
    .filter((name) => !GLOBAL_ATTRIBUTES.has(name) && !CONVENTION.test(name));
  const seen = warned.get(element) ?? new Set<string>();
  warned.set(element, seen);
  const tag = element.localName;
  for (const { name, nearest } of unknownNames(candidates, own)) {
    if (seen.has(name)) continue;
    seen.add(name);
    console.warn(
      `<${tag}>: unknown attribute '${name}'${nearest ? ` (did you mean '${nearest}'?)` : ''}; ` +
        `it is ignored. Its attributes are ${own.join(', ')}`,
    );
  }
}
