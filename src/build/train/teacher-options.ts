/**
 * The options and progress of labelling with a teacher (`clef-web train --teacher`), which the
 * training input names; the labelling itself asks a server, so it runs in Node
 * (src/node/train/teacher.ts).
 */
export interface TeacherOptions {
  /** The server's root (`/v1/systemone` is added), or a Workers AI model URL (`.../ai/run/...`). */
  url: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** The model to ask (default: the server's only model, from `GET /v1/models`). */
  model?: string;
  /** Answers below this confidence are not used (default 0.8). */
  minConfidence?: number;
  /** Requests in flight at once (default 4). */
  concurrency?: number;
  /** Tries after the first for a transient failure (default 5), waiting 1, 2, 4, ... × retryDelayMs. */
  retries?: number;
  retryDelayMs?: number;
  /** Time one request has (default 120 s). */
  timeoutMs?: number;
  /** Where the records, the review sample and the counts go (default `<out>-teacher`). */
  dir: string;
  /** Labelled texts in review.csv (default 100). */
  reviewSize?: number;
  /** Stops asking; the requests in flight are finished and recorded, then the run stops. */
  signal?: AbortSignal;
}

export interface TeacherProgress {
  phase: 'teacher';
  done: number;
  total: number;
  etaMs?: number;
  message?: string;
}
