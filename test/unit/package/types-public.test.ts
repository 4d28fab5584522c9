// The names the README uses are the package's exports: the page API from the root, the
// protocol helpers from `clef-web/protocol`. (That a request literal is type-checked is proven
// on the published types, in test/browser/consumer-app.spec.ts.)
import { describe, expect, it } from 'vitest';
import * as root from '../../../src/index.js';
import * as protocol from '../../../src/protocol-entry.js';

const api = { ...protocol, ...root };

describe('public names', () => {
  it('exports what the README names', () => {
    for (const name of [
      'createClef',
      'BUNDLED_MODEL_URL',
      'registerSystemOneRoute',
      'handleRoute',
      'validateRequest',
      'parseRequestJson',
      'renderValue',
      'pythonRound',
      'encodeRequest',
      'buildResponse',
      'serializeResponse',
      'SystemOneError',
      'IntegrityError',
      'DeviceError',
      'ModelTooLargeError',
      'AbortedError',
      'WorkerLostError',
    ]) {
      expect(api, name).toHaveProperty(name);
    }
  });
});
