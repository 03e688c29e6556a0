import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Answers 200 with a JSON body that never ends (an opening `prefix`, then `chunk` for
 * ever, as fast as the client reads): only a size cap on the client stops it.
 */
export function sendEndlessBody(
  request: IncomingMessage,
  response: ServerResponse,
  prefix: string,
  chunk: string,
): void {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.write(prefix);
  const pump = () => {
    while (!response.destroyed && response.write(chunk)) {
      /* fill the socket buffer */
    }
  };
  response.on('drain', pump);
  request.on('close', () => response.off('drain', pump));
  pump();
}
