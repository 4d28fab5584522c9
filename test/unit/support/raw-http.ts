/**
 * One HTTP/1.1 request to a local server with exactly the headers given (Host included, or
 * none at all), on a connection of its own, from `localAddress` when given (a loopback
 * address other than 127.0.0.1 stands for another client).
 */
import { request as httpRequest, type OutgoingHttpHeaders } from 'node:http';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export function raw(
  port: number,
  options: {
    method?: string;
    path?: string;
    headers?: OutgoingHttpHeaders;
    body?: string;
    localAddress?: string;
  },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers = { ...options.headers };
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path ?? '/v1/models',
        headers,
        setHost: 'host' in headers ? false : true,
        agent: false,
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}
