/**
 * clef-web's own route for calibrated answers: POST a System One request, get
 * `{"response": <the System One body, byte for byte>, "calibrated": <CalibratedDecision>}`;
 * `?abstain_below=0.8` adds a confidence floor. SDKs never call it, and the System One routes
 * answer exactly as before (docs/interop.md, docs/calibration.md). Served only by a backend
 * with `decideCalibrated` (`clef.fetch`, `clef-web serve`); elsewhere the path is a 404.
 */
import { calibrationAsk, isCalibrationError } from '../calibrate/index.js';
import {
  errorToHttp,
  jsonResponse,
  readJsonBody,
  rethrowAbort,
  type RouteBackend,
} from './route-common.js';

/** Answers a POST on the route (routes.ts checks the method, and that the backend serves it). */
export async function calibratedRoute(request: Request, backend: RouteBackend): Promise<Response> {
  try {
    const below = new URL(request.url).searchParams.get('abstain_below');
    const ask = calibrationAsk(below === null ? true : { abstainBelow: Number(below) }) ?? {};
    const body = await readJsonBody(request);
    const { json, calibrated } = await backend.decideCalibrated!(body, ask, request.signal);
    // The body's text is embedded as it is: its bytes are the System One route's.
    return jsonResponse(200, `{"response":${json},"calibrated":${JSON.stringify(calibrated)}}`);
  } catch (error) {
    rethrowAbort(error);
    if (isCalibrationError(error)) {
      const status = error.code === 'calibration_unavailable' ? 501 : 422;
      return jsonResponse(
        status,
        JSON.stringify({ detail: { code: error.code, message: error.message } }),
      );
    }
    const { status, body } = errorToHttp(error);
    return jsonResponse(status, JSON.stringify(body));
  }
}
