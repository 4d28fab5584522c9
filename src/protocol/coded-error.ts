/**
 * The base of clef-web's errors with a stable `code` (SystemOneError, ClefError and its kinds,
 * CalibrationError, TrainError): callers branch on `code`, never on the message, and the page
 * side rebuilds the same class from its code (wire/error-wire.ts). Each class fixes its `name`
 * itself, not from the constructor's (minifiers rename that), so `isCodedError` can tell one
 * apart by name where `instanceof` fails: another bundle's copy, a duplicated dependency, a
 * worker hop. In protocol, which imports nothing, so every part of the product may extend it.
 */
export class CodedError<Code extends string = string> extends Error {
  /** Stable across releases; what callers and the wire go by. */
  readonly code: Code;

  constructor(code: Code, message: string) {
    super(message);
    this.code = code;
  }
}

/** True for an Error named `name` that carries a string `code`, from whichever copy of its module. */
export function isCodedError(x: unknown, name: string): x is CodedError {
  return (
    x instanceof Error && x.name === name && typeof (x as { code?: unknown }).code === 'string'
  );
}
