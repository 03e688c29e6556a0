import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { type ErrorCode, errorCatalogue } from '../errors.ts';
import { sendError } from './error-handler.ts';

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

export function clientErrorHandler(newRequestId: () => string) {
  return function onClientError(error: NodeJS.ErrnoException, socket: Socket): void {
    // A reset connection has nobody left to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    if (socket.writable) {
      const { code, message } = parserFailure(error);
      const status = errorCatalogue[code].status;
      const body = JSON.stringify({ error: { code, message } });
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
          'Content-Type: application/json; charset=utf-8\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n` +
          `x-request-id: ${newRequestId()}\r\n` +
          'Connection: close\r\n\r\n' +
          body,
      );
    }
    socket.destroy();
  };
}
