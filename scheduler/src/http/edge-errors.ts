import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode, errorCatalogue } from '../errors.ts';
import { sendError } from './error-handler.ts';
import type { App } from './types.ts';

/**
 * Errors raised before a request reaches a route keep the error shape and the request
 * id too: Fastify's router errors (through `frameworkErrors`) and Node's HTTP parser
 * errors (through `clientErrorHandler`, which writes to the raw socket).
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      void sendError(reply, 'BAD_REQUEST', 'malformed URL: invalid percent-encoding');
      return;
    case 'FST_ERR_MAX_PARAM_LENGTH':
      void sendError(reply, 'URI_TOO_LONG', 'a path parameter is too long');
      return;
    default:
      request.log.error({ err: error }, 'router error');
      void sendError(reply, 'INTERNAL', `internal error (request id ${request.id})`);
  }
}

function parserFailure(error: NodeJS.ErrnoException): { code: ErrorCode; message: string } {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: 'REQUEST_TIMEOUT', message: 'the request did not arrive in time' };
    case 'HPE_HEADER_OVERFLOW':
      return { code: 'HEADERS_TOO_LARGE', message: 'request headers too large' };
    default:
      return { code: 'BAD_REQUEST', message: 'malformed HTTP request' };
  }
}

/** An error answer written straight to a socket Fastify never saw, then the socket closed. */
function answerOnSocket(socket: Duplex, requestId: string, code: ErrorCode, message: string): void {
  if (socket.writable) {
    const status = errorCatalogue[code].status;
    const body = JSON.stringify({ error: { code, message } });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-id: ${requestId}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy();
}

export function clientErrorHandler(newRequestId: () => string) {
  return function onClientError(error: NodeJS.ErrnoException, socket: Socket): void {
    // A reset connection has nobody left to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const { code, message } = parserFailure(error);
    answerOnSocket(socket, newRequestId(), code, message);
  };
}

/**
 * Requests Node hands to the server itself instead of to Fastify: CONNECT (proxy
 * tunnels), and HTTP/1.1 requests without a Host header (let through by
 * `requireHostHeader: false`, refused here with the error shape instead of Node's bare 400).
 */
export function registerRawRequestErrors(app: App, newRequestId: () => string): void {
  app.server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    answerOnSocket(socket, newRequestId(), 'NOT_FOUND', `no route for CONNECT ${request.url ?? ''}`);
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor >= 1 && !request.headers.host) {
      reply.header('connection', 'close');
      done(new AppError('BAD_REQUEST', 'missing Host header'));
      return;
    }
    done();
  });
}
