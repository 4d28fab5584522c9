/**
 * The sources of the consumer-app test's fresh apps (test/browser/consumer-app.spec.ts): the page
 * script every bundler builds, the TypeScript a user writes against the published types, and the
 * one-script-tag page.
 */

/** The app's page script: the bundled clef-nano decides one message on WASM. */
export const MAIN_JS = `
import { createClef } from 'clef-web';

const clef = await createClef({ device: 'wasm' });
const response = await clef.systemone({
  model: 'clef-nano',
  state: "There are two charges on my card from a shop I've never been to, I think someone stole my card number",
  questions: {
    route: {
      type: 'choice',
      instructions: 'Route this message to the team that handles it.',
      criteria: {
        report_fraud: 'Reports fraudulent charges.',
        card_declined: 'Asks why their card was declined.',
        transfer: 'Wants to move money between accounts.',
        none: 'The message matches none of the other options.',
      },
    },
  },
});
window.__clefResult = { response, info: await clef.info(), isolated: crossOriginIsolated };
`;

/** A user's TypeScript against the published types (`@ts-expect-error` lines must be errors). */
export const TYPED_TS = `
import { createClef, type Clef } from 'clef-web';
import clefWeb from 'clef-web/vite';
import { createSystemOneRoute } from 'clef-web/sw';
import { loadNodePackage } from 'clef-web/node';
import { validateRequest, type ValidRequest } from 'clef-web/protocol';

export const plugin = clefWeb();
export const valid: ValidRequest = validateRequest({ model: 'm', state: 's', questions: {} });
// @ts-expect-error validateRequest takes the body
validateRequest();
export const route = createSystemOneRoute;
export const node = loadNodePackage;
export async function decide(): Promise<string> {
  const clef: Clef = await createClef();
  const response = await clef.systemone({
    model: 'clef-nano',
    state: 'My card was charged twice.',
    questions: { urgent: { type: 'noul', instructions: 'Today?' } },
  });
  await clef.systemone({
    model: 'clef-nano',
    state: 'x',
    // @ts-expect-error a misspelt field is caught
    qestions: { urgent: { type: 'noul' } },
  });
  // @ts-expect-error an unknown question type is caught
  await clef.systemone({ model: 'clef-nano', state: 'x', questions: { u: { type: 'yesno' } } });
  return response.model;
}
`;

/**
 * `<clef-decide>` in React (clef-web/element/react), the element classes from
 * HTMLElementTagNameMap, and the typed snippets of docs/element.md and docs/interop.md.
 */
export const TYPED_TSX = `
import 'clef-web/element';
import type {} from 'clef-web/element/react';
import { createClef, type EscalatedResponse, type SystemOneRequest } from 'clef-web';
import type { ClefChoice, ClefDecide, ClefLevel, ClefNoul, ClefOption, ClefScore } from 'clef-web/element';

export function Widget() {
  return (
    <clef-decide state="my card was declined" device="wasm" label="Route" abstain-below={0.6}>
      <clef-choice name="route" instructions="Route it.">
        <clef-option value="card_declined">Declined</clef-option>
        <clef-option value="none" />
      </clef-choice>
      <clef-noul name="urgent" yes="Today" no="Later" />
      <clef-score name="severity">
        <clef-level>low</clef-level>
        <clef-level>high</clef-level>
      </clef-score>
    </clef-decide>
  );
}
// @ts-expect-error a misspelt attribute is caught
export const misspelt = <clef-decide stat="x" />;
// @ts-expect-error a device that does not exist is caught
export const device = <clef-decide device="gpu" />;
// @ts-expect-error a question needs its name
export const nameless = <clef-choice />;

export const elements: [
  ClefDecide | null,
  ClefChoice | null,
  ClefOption | null,
  ClefNoul | null,
  ClefScore | null,
  ClefLevel | null,
] = [
  document.querySelector('clef-decide'),
  document.querySelector('clef-choice'),
  document.querySelector('clef-option'),
  document.querySelector('clef-noul'),
  document.querySelector('clef-score'),
  document.querySelector('clef-level'),
];

// docs/element.md
const widget = document.querySelector('clef-decide')!;
widget.addEventListener('clef-decision', (e) => {
  const route = e.detail.response.answers.route; // one of the answer types: narrow it
  if (route?.type === 'choice') console.log(route.choice, e.detail.timings.totalMs);
});
widget.addEventListener('clef-error', (e) => console.warn(e.detail.code, e.detail.message));

// docs/interop.md
declare const request: SystemOneRequest;
export async function escalated(): Promise<'local' | 'remote'> {
  const clef = await createClef({
    model: '/models/clef-flash-q4/',
    remote: { baseURL: 'https://api.example.com', apiKey: 'sk-x', when: { below: 0.8 } },
  });
  const r = (await clef.systemone(request)) as EscalatedResponse;
  return r.answered_by;
}
`;

/** clef-web/node's declarations, checked with skipLibCheck off and no onnxruntime-node. */
export const NODE_TS = `
import { loadNodePackage, MissingDependencyError, startServer, ORT_NODE_VERSION } from 'clef-web/node';

export const node: unknown[] = [loadNodePackage, MissingDependencyError, startServer];
export const version: string = ORT_NODE_VERSION;
`;

/** The one-script-tag page: `<clef-decide>` from `clef-web assets --element`. */
export const ELEMENT_PAGE = `<!doctype html>
<title>one script tag</title>
<script type="module" src="/clef-web/clef-decide.js"></script>
<clef-decide device="wasm" state="my card got declined at the grocery store even though I have money, why?">
  <clef-choice name="route" instructions="Route this message to the team that handles it.">
    <clef-option value="report_fraud">Reports fraudulent charges.</clef-option>
    <clef-option value="card_declined">Asks why their card was declined.</clef-option>
    <clef-option value="none">The message matches none of the other options.</clef-option>
  </clef-choice>
</clef-decide>
<script type="module">
  document.querySelector('clef-decide').addEventListener('clef-decision', (e) => {
    window.__clefResult = e.detail.response;
  });
</script>
`;
