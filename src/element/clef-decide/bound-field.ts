/**
 * The form field (or form) a `<clef-decide for="...">` reads its state from: found by id in the
 * element's root, listened to for input and change, and read as text or as the form's values.
 */
export class BoundField {
  private field: HTMLElement | null = null;
  private readonly onInput = (): void => this.changed();

  constructor(
    private readonly host: HTMLElement,
    /** The field's value changed (typed, pasted, or a control of the form changed). */
    private readonly changed: () => void,
  ) {}

  /**
   * Listens to the element with this id (none: unbound); true when it is bound. `retry` runs once
   * the document has loaded when the id is not there yet.
   */
  bind(id: string | undefined, retry: () => void): boolean {
    this.unbind();
    if (!id) return false;
    const root = this.host.getRootNode() as Document | ShadowRoot;
    const field = root.getElementById?.(id) ?? null;
    if (!field) {
      // The field may come after the element in the markup.
      if (document.readyState === 'loading') {
        document.addEventListener('DOMContentLoaded', retry, { once: true });
      }
      return false;
    }
    this.field = field;
    field.addEventListener('input', this.onInput);
    field.addEventListener('change', this.onInput);
    return true;
  }

  unbind(): void {
    this.field?.removeEventListener('input', this.onInput);
    this.field?.removeEventListener('change', this.onInput);
    this.field = null;
  }

  /**
   * The bound field's value: a form's text fields as an object, an input's value, else the
   * element's text; `unbound` when no field is bound.
   */
  read<T>(unbound: T): T | string | Record<string, string> | undefined {
    const field = this.field;
    if (!field) return unbound;
    if (field instanceof HTMLFormElement) {
      const values: Record<string, string> = {};
      for (const [name, value] of new FormData(field)) {
        if (typeof value === 'string') values[name] = value;
      }
      return values;
    }
    const value = (field as HTMLElement & { value?: unknown }).value;
    return typeof value === 'string' ? value : (field.textContent ?? undefined);
  }
}
