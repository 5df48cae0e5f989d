/**
 * The handler's answer onto a node:http response: the kit's JSON answers as they are, an event
 * stream as it comes, any other body read first, so that one that fails becomes an error answer.
 */
import type { ServerResponse } from 'node:http';
import { takeLazy } from '../lib/lazy-response.js';
import { TextResponse } from '../lib/text-response.js';
import { toErrorResponse } from '../responses.js';
import { writeEventStream } from './event-stream.js';
import { tell, type NodeAdapterOptions } from './handler.js';
import { copyHeaders } from './node-headers.js';

/**
 * Writes the answer. Its body is read first: one that fails (a handler's stream that errored)
 * becomes an error answer (a 500, told to `onError` with the `request`), not a connection cut midway.
 */
export async function writeResponse(res: ServerResponse, answer: Response, request: Request | undefined, options: NodeAdapterOptions): Promise<void> {
  // The kit's JSON answers, never made a Response: status, headers and text as they are.
  const lazy = takeLazy(answer);
  if (lazy !== undefined) {
    res.statusCode = lazy.status;
    if (lazy.headers instanceof Headers) copyHeaders(res, lazy.headers);
    else for (const name in lazy.headers) res.setHeader(name, lazy.headers[name]!);
    res.end(lazy.text);
    return;
  }
  // The type first: asking a TextResponse for its body would make it a stream.
  if (/^text\/event-stream\b/i.test(answer.headers.get('content-type') ?? '') && answer.body) return writeEventStream(res, answer);
  const response = answer;
  // A TextResponse hands its text over as it is: nothing to read.
  let body: Buffer | string | undefined = TextResponse.take(response);
  try {
    if (body === undefined && response.body) body = Buffer.from(await response.arrayBuffer());
  } catch (error) {
    const refusal = toErrorResponse(error);
    // A client that left mid-upload fails a body made of its request: no fault of the handler.
    const gone = res.destroyed || res.req?.destroyed;
    if (request && refusal.status >= 500 && !gone) tell(options, error, request);
    return writeResponse(res, refusal, undefined, options);
  }
  res.statusCode = response.status;
  copyHeaders(res, response.headers);
  res.end(body);
}
