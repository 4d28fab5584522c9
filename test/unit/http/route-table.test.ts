// One route table (src/http/route-table.ts) read by every edge: handleRoute (clef.fetch and
// clef-web serve), the service worker's matcher and the server's `Allow` header. Each route of
// the table is answered by handleRoute on its method and refused 405 on the other, the service
// worker takes it, and no edge answers a path the table does not hold.
import { describe, expect, it } from 'vitest';
import {
  allowedMethods,
  findRoute,
  isServedPath,
  routeDialect,
  routeListing,
  ROUTES,
} from '../../../src/http/route-table.js';
import { handleRoute, type RouteBackend } from '../../../src/http/routes.js';
import { systemOneRoutePath } from '../../../src/sw/route.js';

/** A backend that records which call a route made, answering a fixed System One body. */
function recordingBackend(calls: string[]): RouteBackend {
  return {
    decide: async () => {
      calls.push('decide');
      return { json: '{"answers":[]}' };
    },
    decideCalibrated: async () => {
      calls.push('decideCalibrated');
      return { json: '{"answers":[]}' };
    },
    models: () => {
      calls.push('models');
      return [];
    },
  };
}

/** A concrete path for each route (the Workers AI one names a served model). */
function samplePath(path: string | RegExp): string {
  return typeof path === 'string' ? path : '/client/v4/accounts/a/ai/run/@cf/cloudflare/m';
}

const CALL_OF: Record<string, string> = {
  systemone: 'decide',
  decisions: 'decide',
  'workers-ai': 'decide',
  'chat-completions': 'decide',
  models: 'models',
  calibrated: 'decideCalibrated',
};

describe('the route table', () => {
  it('lists each path once', () => {
    const shown = ROUTES.map((r) => r.shown);
    expect(new Set(shown).size).toBe(shown.length);
    expect(ROUTES.map((r) => r.kind).sort()).toEqual(Object.keys(CALL_OF).sort());
  });

  for (const route of ROUTES) {
    const path = samplePath(route.path);
    it(`${route.method} ${route.shown}: every edge agrees with the table`, async () => {
      expect(findRoute(path)).toBe(route);
      expect(isServedPath(path)).toBe(true);
      expect(systemOneRoutePath(`/app${path}`, '/app')).toBe(path);
      expect(routeDialect(path)).toBe(route.dialect);
      expect(allowedMethods(path)).toBe(route.method === 'GET' ? 'GET, HEAD' : 'POST');

      const calls: string[] = [];
      const body =
        route.kind === 'chat-completions'
          ? '{"model":"m","messages":[{"role":"user","content":"x"}]}'
          : '{"model":"m"}';
      const init = route.method === 'POST' ? { method: 'POST', body } : { method: 'GET' };
      const ok = await handleRoute(new Request(`http://x${path}`, init), recordingBackend(calls));
      expect(ok.status, await ok.clone().text()).not.toBe(404);
      expect(ok.status).not.toBe(405);
      // The chat route refuses the fixed body before deciding: it reached its handler.
      if (route.kind !== 'chat-completions') expect(calls).toEqual([CALL_OF[route.kind]]);

      const other = route.method === 'POST' ? 'GET' : 'POST';
      const refused = await handleRoute(
        new Request(`http://x${path}`, { method: other }),
        recordingBackend([]),
      );
      expect(refused.status).toBe(405);
    });
  }

  it('answers no path outside it: 404 from handleRoute, not taken by the service worker', async () => {
    for (const path of ['/v1/other', '/v1/systemone/x', '/client/v4/accounts/a/ai/run/@cf/x/m']) {
      expect(findRoute(path)?.kind === 'workers-ai' || findRoute(path) === undefined).toBe(true);
      expect(systemOneRoutePath(path)).toBeNull();
      const res = await handleRoute(
        new Request(`http://x${path}`, { method: 'POST', body: '{}' }),
        recordingBackend([]),
      );
      expect(res.status).toBe(404);
    }
    // clef-web's own namespace is the service worker's, answered 404 in JSON by handleRoute.
    expect(systemOneRoutePath('/v1/clef/unknown')).toBe('/v1/clef/unknown');
  });

  it('names its routes for the CLI from the table', () => {
    expect(routeListing()).toBe(
      'POST /v1/systemone, /v1/decisions, /v1/chat/completions, /v1/clef/calibrated, ' +
        '/client/v4/accounts/<any>/ai/run/@cf/cloudflare/<model>; GET /v1/models',
    );
  });
});
