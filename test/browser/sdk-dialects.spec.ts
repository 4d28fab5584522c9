/**
 * The SDKs people already use, in the browser (WASM, the tiny fixture): the unmodified
 * `cloudflare` and `openai` SDKs through `clef.fetch` and through the service-worker route.
 * Cloudflare's `ai.run` posts
 * to the percent-encoded model path; OpenAI's `decisions.create` and `chat.completions.create`
 * get answers equal to the System One answers the page's engine gives for the same decision
 * (written here by hand from docs/interop.md's mapping); nothing leaves the page's origin.
 */
import { expect, test, type Request } from '@playwright/test';
import { FP32, MODEL, mustLoad, openPage } from './support/engine.js';

const STATE = 'I was charged twice for one order and the parcel is late.';

/** The OpenAI Decisions questions, and the System One questions they mean. */
const DECISION_QUESTIONS = [
  { type: 'predicate', name: 'urgent', instructions: 'Is this urgent?' },
  {
    type: 'choice',
    name: 'team',
    instructions: 'Which team?',
    choices: [{ value: 'billing', description: 'Money' }, { value: 'shipping' }, { value: false }],
  },
  {
    type: 'score',
    name: 'anger',
    instructions: 'How angry?',
    levels: [{ label: 'calm' }, { label: 'cross' }],
  },
];
const SYSTEM_ONE_QUESTIONS = {
  urgent: { type: 'noul', instructions: 'Is this urgent?' },
  team: {
    type: 'choice',
    instructions: 'Which team?',
    criteria: { billing: 'Money', shipping: null, false: null },
  },
  anger: { type: 'score', instructions: 'How angry?', criteria: ['calm', 'cross'] },
};
const CHAT = {
  messages: [{ role: 'user', content: STATE }],
  schema: {
    type: 'object',
    properties: {
      team: { type: 'string', enum: ['billing', 'shipping'] },
      urgent: { type: 'boolean' },
    },
    required: ['team', 'urgent'],
  },
  questions: {
    team: { type: 'choice', instructions: 'team', criteria: { billing: null, shipping: null } },
    urgent: { type: 'noul', instructions: 'urgent' },
  },
};

function withoutAnsweredBy(response: any) {
  const copy = { ...response };
  delete copy.answered_by;
  return copy;
}

/** The Decision the mapping promises for a System One response (docs/interop.md). */
function expectedDecision(so: any) {
  const a = so.answers;
  const teamValue: Record<string, unknown> = {
    billing: 'billing',
    shipping: 'shipping',
    false: false,
  };
  return {
    answers: [
      { type: 'predicate', name: 'urgent', probability: a.urgent.noul },
      {
        type: 'choice',
        name: 'team',
        choice: teamValue[a.team.choice],
        confidence: a.team.confidence,
        probabilities: [
          { value: 'billing', probability: a.team.probabilities.billing },
          { value: 'shipping', probability: a.team.probabilities.shipping },
          { value: false, probability: a.team.probabilities.false },
        ],
      },
      {
        type: 'score',
        name: 'anger',
        score: a.anger.score,
        confidence: a.anger.confidence,
        probabilities: [
          { label: 'calm', value: 0, probability: a.anger.probabilities['0'] },
          { label: 'cross', value: 1, probability: a.anger.probabilities['1'] },
        ],
      },
    ],
    model: MODEL,
    usage: {
      input_tokens: so.usage.input_tokens,
      input_tokens_details: { cache_write_tokens: 0, cached_tokens: 0 },
      output_tokens: 0,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: so.usage.input_tokens,
    },
  };
}

test('cloudflare and openai SDKs through clef.fetch and the service worker', async ({ page }) => {
  test.setTimeout(180_000);
  const urls: string[] = [];
  page.context().on('request', (r: Request) => urls.push(r.url()));
  await openPage(page, '/test/browser/pages/sdks.html');
  await mustLoad(page, 'main', { model: FP32, device: 'wasm' });
  const out = await page.evaluate(
    async ([model, state, decisionQuestions, systemOneQuestions, chat]) => {
      const { Cloudflare, OpenAI, registerSystemOneRoute } = (window as any).sdks;
      const clef = window.enginePage.get('main')!;
      const calls = async (fetchImpl: typeof fetch | undefined, base: string) => {
        const options = fetchImpl ? { fetch: fetchImpl } : {};
        const cf = new Cloudflare({
          apiToken: 'unused',
          baseURL: `${base}/client/v4`,
          maxRetries: 0,
          ...options,
        });
        const oa = new OpenAI({
          apiKey: 'unused',
          baseURL: `${base}/v1`,
          dangerouslyAllowBrowser: true,
          maxRetries: 0,
          ...options,
        });
        const run = await cf.ai.run(`@cf/cloudflare/${model}`, {
          account_id: 'acct',
          state,
          questions: systemOneQuestions,
        });
        const decision = await oa.decisions.create({
          model,
          input: state,
          questions: decisionQuestions,
        });
        const completion = await oa.chat.completions.create({
          model,
          temperature: 0,
          messages: chat.messages,
          response_format: {
            type: 'json_schema',
            json_schema: { name: 'triage', schema: chat.schema },
          },
        });
        const refused = await oa.decisions
          .create({
            model,
            input: [
              { role: 'user', content: [{ type: 'input_image', image_url: 'https://x/y.png' }] },
            ],
            questions: decisionQuestions,
          })
          .then(
            () => null,
            (e: any) => ({
              status: e.status,
              code: e.code,
              param: e.param,
              bad: e instanceof OpenAI.BadRequestError,
            }),
          );
        return { run, decision, content: completion.choices[0].message.content, refused };
      };
      const viaFetch = await calls(clef.fetch, 'https://api.example.invalid');
      const handle = await registerSystemOneRoute(clef, {
        scriptUrl: '/test/browser/pages/systemone-sw.ts',
        type: 'module',
      });
      await handle.controlled;
      const viaWorker = await calls(undefined, location.origin);
      handle.stop();
      await handle.registration.unregister();
      const direct = await clef.systemone({ model, state, questions: systemOneQuestions as any });
      const chatDirect = await clef.systemone({
        model,
        state: chat.messages,
        questions: chat.questions as any,
      });
      return { viaFetch, viaWorker, direct, chatDirect };
    },
    [MODEL, STATE, DECISION_QUESTIONS, SYSTEM_ONE_QUESTIONS, CHAT] as const,
  );
  // clef.systemone marks its answers `answered_by`; Workers AI's result carries it too.
  const direct = withoutAnsweredBy(out.direct);
  const chat = out.chatDirect as any;
  const content = JSON.stringify({
    team: chat.answers.team.choice,
    urgent: chat.answers.urgent.noul >= 0.5,
  });
  for (const [transport, got] of [
    ['clef.fetch', out.viaFetch],
    ['service worker', out.viaWorker],
  ] as const) {
    expect(withoutAnsweredBy(got.run), transport).toEqual(direct);
    expect(got.decision, transport).toEqual(expectedDecision(direct));
    expect(got.content, transport).toBe(content);
    expect(got.refused, transport).toEqual({
      status: 400,
      code: 'unsupported_value',
      param: 'input[0].content[0]',
      bad: true,
    });
  }
  // The service worker saw the encoded model path; nothing went to another origin.
  const origin = new URL(page.url()).origin;
  expect(urls).toContain(`${origin}/client/v4/accounts/acct/ai/run/@cf%2Fcloudflare%2F${MODEL}`);
  expect(urls.filter((u) => new URL(u).origin !== origin)).toEqual([]);
});
