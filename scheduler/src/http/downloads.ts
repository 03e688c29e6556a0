import type { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

/** A file the API hands out to be saved: its media type, its name, its bytes as they stream. */
export interface Download {
  contentType: string;
  filename: string;
  body: Readable;
}

/**
 * Sends a download: saved as a file rather than shown, never cached (payroll data, a
 * tenant's whole archive with its secrets), never sniffed as another type.
 */
export function sendDownload(reply: FastifyReply, file: Download) {
  return reply
    .header('content-type', file.contentType)
    .header('content-disposition', `attachment; filename="${file.filename}"`)
    .header('cache-control', 'private, no-store')
    .header('x-content-type-options', 'nosniff')
    .send(file.body);
}

/** The `content-disposition` header of a download, as the API document declares it. */
export function attachmentHeader(exampleFilename: string) {
  return {
    'content-disposition': {
      type: 'string',
      description: 'attachment; filename="…": save the file rather than show it',
      examples: [`attachment; filename="${exampleFilename}"`],
    },
  };
}
