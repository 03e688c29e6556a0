import type { AddressInfo } from 'node:net';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientErrorHandler } from '../src/http/edge-errors.ts';

/**
 * What the client-error handler writes to a connection Node's HTTP parser gave up on,
 * byte for byte, over a real socket pair.
 */
let server: Server;
let port: number;
let accepted: (socket: Socket) => void;

beforeAll(async () => {
  server = createServer((socket) => accepted(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

interface Outcome {
  /** What the client received. */
  received: string;
  /** The server closed the connection. */
  closed: boolean;
  serverSocket: Socket;
}

/**
 * Opens a connection, lets `act` handle the server side, and reports what reached the
 * client within `waitMs`.
 */
function onConnection(act: (socket: Socket) => void, waitMs = 5000): Promise<Outcome> {
  return new Promise((resolve) => {
    let serverSocket: Socket | undefined;
    accepted = (socket) => {
      serverSocket = socket;
      act(socket);
    };
    const client = connect(port, '127.0.0.1');
    let received = '';
    let finished = false;
    const finish = (closed: boolean) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      client.destroy();
      serverSocket?.destroy();
      resolve({ received, closed, serverSocket: serverSocket as Socket });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    client.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
    client.on('end', () => finish(true));
    client.on('close', () => finish(true));
    client.on('error', () => finish(true));
  });
}

/** Made per test: code that runs while a test runs is what mutation testing attributes to it. */
const handler = (error: NodeJS.ErrnoException, socket: Socket) =>
  clientErrorHandler(() => 'fixed-request-id')(error, socket);
const parserError = (code: string) => Object.assign(new Error(`parser: ${code}`), { code });

function expectedAnswer(status: string, code: string, message: string): string {
  const body = JSON.stringify({ error: { code, message } });
  return (
    `HTTP/1.1 ${status}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'x-request-id: fixed-request-id\r\n' +
    'Connection: close\r\n\r\n' +
    body
  );
}

describe('clientErrorHandler', () => {
  it.each([
    [
      'HPE_HEADER_OVERFLOW',
      '431 Request Header Fields Too Large',
      'HEADERS_TOO_LARGE',
      'request headers too large',
    ],
    [
      'ERR_HTTP_REQUEST_TIMEOUT',
      '408 Request Timeout',
      'REQUEST_TIMEOUT',
      'the request did not arrive in time',
    ],
    ['HPE_INVALID_METHOD', '400 Bad Request', 'BAD_REQUEST', 'malformed HTTP request'],
    ['HPE_INVALID_HEADER_TOKEN', '400 Bad Request', 'BAD_REQUEST', 'malformed HTTP request'],
  ])('answers %s with the error shape and closes', async (code, status, errorCode, message) => {
    const outcome = await onConnection((socket) => handler(parserError(code), socket));
    expect(outcome.received).toBe(expectedAnswer(status, errorCode, message));
    expect(outcome.closed).toBe(true);
  });

  it('leaves a reset connection alone: nobody is left to answer', async () => {
    const outcome = await onConnection((socket) => handler(parserError('ECONNRESET'), socket), 300);
    expect(outcome.received).toBe('');
    expect(outcome.closed).toBe(false);
  });

  it('does nothing to a connection already destroyed', async () => {
    let threw: unknown = null;
    const outcome = await onConnection((socket) => {
      socket.destroy();
      try {
        handler(parserError('HPE_INVALID_METHOD'), socket);
      } catch (error) {
        threw = error;
      }
    });
    expect(threw).toBeNull();
    expect(outcome.received).toBe('');
  });

  it('closes without writing when the connection can no longer be written to', async () => {
    const outcome = await onConnection((socket) => {
      socket.end();
      handler(parserError('HPE_INVALID_METHOD'), socket);
    });
    expect(outcome.received).toBe('');
    expect(outcome.closed).toBe(true);
    expect(outcome.serverSocket.destroyed).toBe(true);
  });
});
