// The names the README uses are the package root's exports. (That a request literal is
// type-checked is proven on the published types, in test/browser/consumer-app.spec.ts.)
import { describe, expect, it } from 'vitest';
import * as api from '../../src/index.js';

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
