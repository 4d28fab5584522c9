'use strict';
// `require('clef-web')`: the page API is an ES module (it starts a module Worker and is bundled
// for the browser). CommonJS gets this one clear error, not `No "exports" main defined`.
class EsmOnlyError extends Error {
  constructor() {
    super(
      "clef-web is an ES module: `import { createClef } from 'clef-web'` in code your bundler " +
        "builds (or `await import('clef-web')` from CommonJS). For Node's engine and server use " +
        "`import('clef-web/node')`; for a CommonJS Vite config, `require('clef-web/vite')` works.",
    );
    this.name = 'EsmOnlyError';
    this.code = 'ERR_CLEF_WEB_ESM_ONLY';
  }
}
throw new EsmOnlyError();
