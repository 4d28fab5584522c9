/**
 * `<div ${cssProps({ width: '40%' })}>`: CSS properties set through the element's CSSOM
 * (`style.setProperty`), never as a `style` attribute. A strict Content-Security-Policy (no
 * `'unsafe-inline'` in `style-src`) refuses inline style attributes, Lit's `style=${...}`
 * bindings and the first render of its `styleMap` included; CSSOM writes are not inline styles.
 */
import { noChange } from 'lit';
import { Directive, directive, PartType, type ElementPart, type PartInfo } from 'lit/directive.js';

export type CssProps = Readonly<Record<string, string>>;

class CssPropsDirective extends Directive {
  private previous: CssProps = {};

  constructor(part: PartInfo) {
    super(part);
    if (part.type !== PartType.ELEMENT) throw new Error('cssProps goes on an element: <div ${…}>');
  }

  render(_props: CssProps): typeof noChange {
    return noChange;
  }

  override update(part: ElementPart, [props]: [CssProps]): typeof noChange {
    const style = (part.element as HTMLElement).style;
    for (const name of Object.keys(this.previous)) {
      if (!(name in props)) style.removeProperty(name);
    }
    for (const [name, value] of Object.entries(props)) style.setProperty(name, value);
    this.previous = props;
    return noChange;
  }
}

/** Sets `props` (CSS property names as in a stylesheet: `width`, `--q`) on the element. */
export const cssProps = directive(CssPropsDirective);
