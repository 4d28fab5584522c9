/**
 * Page side of worker-traffic.spec.ts: every Worker this page starts (createClef's, the
 * element's) is a counted one, which notes each Comlink call the page posts to it (the method)
 * and what that call's answer carried (its keys and its size as JSON text). Installed before
 * any worker starts; then `window.traffic.run` makes one decision through each page surface.
 */
import '../../../src/element/index.js';
import { createClef } from '../../../src/client/clef.js';
import type { DecisionRecord } from '../../../src/core/record.js';
import type { SystemOneRequest } from '../../../src/protocol/types.js';

/** One call the page made to a worker, and what came back. */
export interface Call {
  method: string;
  /** The answer's value (a WireResult's `value`), described; absent until it arrived. */
  answer?: { keys: string[]; bytes: number; logitRows: number | null };
}

const calls: Call[] = [];

function describe(result: unknown): Call['answer'] {
  const value = (result as { ok?: boolean; value?: unknown } | null)?.value;
  const fields = typeof value === 'object' && value !== null ? Object.keys(value) : [];
  const logits = (value as { logits?: unknown[] } | undefined)?.logits;
  return {
    keys: fields.sort(),
    bytes: new Blob([JSON.stringify(value ?? null)]).size,
    logitRows: Array.isArray(logits) ? logits.length : null,
  };
}

const NativeWorker = globalThis.Worker;
class CountedWorker extends NativeWorker {
  /** Comlink message id -> the call it made. */
  private readonly sent = new Map<unknown, Call>();
  constructor(url: string | URL, options?: WorkerOptions) {
    super(url, options);
    this.addEventListener('message', (event: MessageEvent) => {
      const data = event.data as { id?: unknown; value?: unknown } | null;
      const call = this.sent.get(data?.id);
      if (!call) return;
      this.sent.delete(data?.id);
      call.answer = describe(data?.value);
    });
  }
  override postMessage(message: unknown, transfer?: any): void {
    const m = message as { type?: string; id?: unknown; path?: string[] } | null;
    if (m?.type === 'APPLY' && Array.isArray(m.path)) {
      const call: Call = { method: m.path.join('.') };
      calls.push(call);
      this.sent.set(m.id, call);
    }
    super.postMessage(message, transfer);
  }
}
globalThis.Worker = CountedWorker;

/** What each surface's one decision cost in worker calls, and what the page got. */
export interface Step {
  calls: Call[];
  /** The decision as the surface returned it (for decide(): whether logits came). */
  logitRows: number | null;
}

async function step(work: () => Promise<number | null>): Promise<Step> {
  const from = calls.length;
  const logitRows = await work();
  // Answers are noted by the counted worker's listener, which runs before Comlink's.
  return { calls: calls.slice(from), logitRows };
}

const MODEL = '/clef-web/models/clef-nano/';

(window as unknown as { traffic: unknown }).traffic = {
  async run(request: SystemOneRequest) {
    const records: DecisionRecord[] = [];
    const clef = await createClef({
      model: MODEL,
      device: 'wasm',
      record: { to: (r) => void records.push(r) },
    });
    const systemone = await step(async () => {
      await clef.systemone(request);
      return null;
    });
    let decided: { response: unknown; json: string } | null = null;
    const decide = await step(async () => {
      const wire = await clef.decide(request);
      decided = { response: wire.response, json: wire.json };
      return wire.logits?.length ?? null;
    });
    const fetched = await step(async () => {
      const res = await clef.fetch('/v1/systemone', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(request),
      });
      if (res.status !== 200) throw new Error(`fetch answered ${res.status}`);
      return null;
    });
    await clef.dispose();

    // The element, recording: its first decision (at load) first, then one more.
    const element = document.createElement('clef-decide') as HTMLElement & {
      decide(): Promise<unknown>;
      questions: unknown;
      state: unknown;
    };
    element.setAttribute('record', '');
    element.setAttribute('model', MODEL);
    element.setAttribute('device', 'wasm');
    element.questions = request.questions;
    element.state = request.state;
    const first = new Promise((resolve) =>
      element.addEventListener('clef-decision', resolve, { once: true }),
    );
    document.body.append(element);
    await first;
    const elementStep = await step(async () => {
      const detail = (await element.decide()) as { logits?: unknown[] } | null;
      if (!detail) throw new Error('the element did not decide');
      return detail.logits?.length ?? null;
    });
    element.remove();
    // The routes parse the body losslessly: a Map in, a Map echoed in the legend, as before.
    const echo = (records[2]?.response.answers['severity'] as { legend?: Record<string, unknown> })
      ?.legend?.['1'];
    const fetchedLegendIsMap = echo instanceof Map;
    return {
      systemone,
      decide,
      fetched,
      element: elementStep,
      records,
      decided,
      fetchedLegendIsMap,
    };
  },
};
