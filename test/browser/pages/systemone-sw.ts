/// <reference lib="webworker" />
// A test service worker with only the System One routes (the playground's own worker adds
// precaching): exactly the calls src/sw/route.ts asks a service worker to make.
import { createSystemOneRoute } from '../../../src/sw/route.js';

const sw = self as unknown as ServiceWorkerGlobalScope;
const systemOne = createSystemOneRoute(sw);

sw.addEventListener('install', () => void sw.skipWaiting());
sw.addEventListener('activate', (event) => event.waitUntil(sw.clients.claim()));
sw.addEventListener('fetch', (event) => {
  if (systemOne.matches(event.request)) event.respondWith(systemOne.respond(event));
});
sw.addEventListener('message', (event) => void systemOne.onMessage(event));
