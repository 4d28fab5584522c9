/**
 * A whole HTTP request as the server hands it to an engine worker to route (engine-pool.ts), and
 * the response it gets back: plain data, so it crosses threads (the body is transferred).
 */

export interface RouteRequest {
  method: string;
  /** Absolute, as `new Request` needs it. */
  url: string;
  contentType: string;
  /** Transferred to the worker, not copied. */
  body?: ArrayBuffer;
}

/** handleRoute's response, read in the worker. */
export interface RouteReply {
  status: number;
  headers: Array<[string, string]>;
  body: ArrayBuffer;
}
