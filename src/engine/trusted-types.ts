/**
 * Trusted Types in the engine's worker. Under `require-trusted-types-for 'script'` (sent with
 * the worker's script, as a host's headers for every path do) a worker may only be started
 * from a TrustedScriptURL, and onnxruntime starts its thread workers from a plain URL (its
 * loader under /ort/). This worker's global scope is clef-web's own, so it defines the default
 * policy there: script URLs of this origin pass, any other is refused. The page's own realm is
 * the app's: docs/deploy.md gives the default policy a page defines for clef-web's workers.
 */

interface TrustedTypesLike {
  defaultPolicy: unknown;
  createPolicy(name: string, rules: { createScriptURL(url: string): string }): unknown;
}

let done = false;

/** Defines the worker's default policy once, where Trusted Types exist and none is defined. */
export function allowOwnOriginScriptUrls(): void {
  if (done) return;
  done = true;
  const tt = (globalThis as { trustedTypes?: TrustedTypesLike }).trustedTypes;
  if (!tt || tt.defaultPolicy || 'document' in globalThis) return;
  const origin = globalThis.location.origin;
  try {
    tt.createPolicy('default', {
      createScriptURL(url: string): string {
        if (new URL(url, globalThis.location.href).origin === origin) return url;
        throw new TypeError(`clef-web: refusing a worker script from another origin: ${url}`);
      },
    });
  } catch {
    // A `trusted-types` directive that does not list 'default': onnxruntime then cannot start
    // its thread workers (measured: the session fails), and the policy's report says why;
    // docs/deploy.md says to allow 'default'.
  }
}
