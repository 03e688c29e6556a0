import PQueue from 'p-queue';
import { Agent, type Dispatcher, interceptors, request } from 'undici';
import type { FeedLimits } from '../format/limits.ts';
import { reject } from '../format/rejection.ts';
import { MANIFEST_FILE, SIGNATURE_FILE } from '../format/rules.ts';
import type { ListedFile } from '../verify/verify-bytes.ts';
import { type FeedHead, type FeedSource, SourceError, type Validators } from './source.ts';

export interface HttpLimits {
  /** Time to open the TCP (and TLS) connection. */
  connectMs: number;
  /** Time for one whole request, body included. */
  totalMs: number;
  /** Redirects followed per request at most. */
  maxRedirects: number;
  /** Files fetched at once. */
  concurrency: number;
  /**
   * Time for one whole pull, from the manifest to the last file: a mirror that answers
   * every request just inside `totalMs` cannot stretch a pull of many files for hours.
   */
  pullMs: number;
}

export const defaultHttpLimits: HttpLimits = {
  connectMs: 10_000,
  totalMs: 60_000,
  maxRedirects: 5,
  concurrency: 8,
  pullMs: 600_000,
};

/**
 * A feed on an HTTP(S) server or mirror. Plain http is allowed: the signature carries the
 * trust, not the transport. Every request has a connect and a total deadline, follows at
 * most a few redirects, and stops reading a body one byte past what may be accepted.
 * The manifest is fetched conditionally (If-None-Match, If-Modified-Since), so an
 * unchanged feed costs one small request and nothing is parsed again.
 */
export class HttpSource implements FeedSource {
  readonly directory = null;
  readonly location: string;
  private readonly base: URL;
  private readonly dispatcher: Dispatcher;
  private readonly queue: PQueue;
  /** The deadline of the pull under way (set when its manifest is asked for). */
  private pullDeadline: AbortSignal | null = null;

  constructor(
    baseUrl: string,
    private readonly limits: HttpLimits = defaultHttpLimits,
    /** Extra CA certificates (PEM) to trust, e.g. of a mirror on the LAN. */
    ca?: string,
  ) {
    this.base = new URL(baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
    this.location = this.base.href;
    this.dispatcher = new Agent({
      connect: { timeout: limits.connectMs, ...(ca ? { ca } : {}) },
      keepAliveTimeout: 10_000,
    }).compose(interceptors.redirect({ maxRedirections: limits.maxRedirects }));
    this.queue = new PQueue({ concurrency: limits.concurrency });
  }

  async readHead(limits: FeedLimits, previous?: Validators | null): Promise<FeedHead | 'unchanged'> {
    const headers: Record<string, string> = {};
    if (previous?.etag) headers['if-none-match'] = previous.etag;
    if (previous?.lastModified) headers['if-modified-since'] = previous.lastModified;
    this.pullDeadline = AbortSignal.timeout(this.limits.pullMs);
    const manifest = await this.get(MANIFEST_FILE, limits.manifestBytes, headers);
    if (manifest === 'unchanged') return 'unchanged';
    if (!manifest) reject('manifest-missing', `manifest.yaml is missing at ${this.location}`, MANIFEST_FILE);
    const signature = await this.get(SIGNATURE_FILE, limits.signatureBytes);
    const validators: Validators = {};
    if (manifest.etag) validators.etag = manifest.etag;
    if (manifest.lastModified) validators.lastModified = manifest.lastModified;
    return { manifest: manifest.body, signature: signature?.body ?? null, validators };
  }

  readFile(file: ListedFile): Promise<Buffer | null> {
    return this.queue.add(
      async () => {
        const result = await this.get(file.path, file.size);
        return result?.body ?? null;
      },
      { throwOnTimeout: true },
    );
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  /**
   * GET of one feed file: its body (at most cap + 1 bytes), null for 404/410, or
   * `unchanged` for 304 to a conditional request (`headers` with validators). A 304 to a
   * request that asked nothing conditionally is a protocol error of the host (or a proxy
   * between): no feed was received, and it is refused with its own reason, never read as
   * "the feed has not changed".
   */
  private get(relative: string, cap: number): Promise<Body | null>;
  private get(
    relative: string,
    cap: number,
    headers: Record<string, string>,
  ): Promise<Body | null | 'unchanged'>;
  private async get(
    relative: string,
    cap: number,
    headers: Record<string, string> = {},
  ): Promise<Body | null | 'unchanged'> {
    const url = new URL(relative.split('/').map(encodeURIComponent).join('/'), this.base);
    let response: Dispatcher.ResponseData;
    try {
      response = await request(url, {
        dispatcher: this.dispatcher,
        headers: { 'user-agent': 'advisory-appliance', ...headers },
        signal: AbortSignal.any([
          AbortSignal.timeout(this.limits.totalMs),
          ...(this.pullDeadline ? [this.pullDeadline] : []),
        ]),
      });
    } catch (error) {
      if (this.pullDeadline?.aborted)
        throw new SourceError(`${url.href}: the pull took longer than ${this.limits.pullMs / 1000} s`);
      throw new SourceError(`${url.href}: ${describe(error)}`);
    }
    const { statusCode, body } = response;
    if (statusCode === 304) {
      await body.dump();
      if (Object.keys(headers).length > 0) return 'unchanged';
      reject(
        'not-modified-unasked',
        `${url.href}: the feed host answered 304 Not Modified to a request without validators (no If-None-Match or If-Modified-Since was sent): a protocol error of the host or a proxy in between; no feed was received`,
        relative,
      );
    }
    if (statusCode === 404 || statusCode === 410) {
      await body.dump();
      return null;
    }
    if (statusCode >= 300 && statusCode <= 399) {
      // Left unfollowed: more redirects than allowed, or back to a URL already visited.
      await body.dump();
      throw new SourceError(
        `${url.href}: HTTP ${statusCode}: too many redirects or a redirect loop (at most ${this.limits.maxRedirects} are followed)`,
      );
    }
    if (statusCode < 200 || statusCode > 299) {
      await body.dump();
      throw new SourceError(`${url.href}: HTTP ${statusCode}`);
    }
    const chunks: Buffer[] = [];
    let length = 0;
    try {
      for await (const chunk of body) {
        const bytes = chunk as Buffer;
        chunks.push(bytes);
        length += bytes.length;
        // One byte past the cap is enough to know the file is too large.
        if (length > cap) {
          body.destroy();
          break;
        }
      }
    } catch (error) {
      if (this.pullDeadline?.aborted)
        throw new SourceError(`${url.href}: the pull took longer than ${this.limits.pullMs / 1000} s`);
      throw new SourceError(`${url.href}: ${describe(error)}`);
    }
    const all = Buffer.concat(chunks, length);
    const etag = header(response.headers.etag);
    const lastModified = header(response.headers['last-modified']);
    return {
      body: all.length > cap + 1 ? all.subarray(0, cap + 1) : all,
      ...(etag ? { etag } : {}),
      ...(lastModified ? { lastModified } : {}),
    };
  }
}

interface Body {
  body: Buffer;
  etag?: string;
  lastModified?: string;
}

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const name = (error as Error).name;
  if (name === 'TimeoutError' || name === 'AbortError') return 'timed out';
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
