/**
 * What token verification reports, without any HTTP: the request pipeline (http/)
 * turns a rejection into 401 with its reason in `WWW-Authenticate`, and an unavailable
 * key source into 503.
 */
export class TokenRejected extends Error {
  override name = 'TokenRejected';
  /** A short reason for the client and the log, e.g. "token expired". */
  constructor(readonly reason: string) {
    super(reason);
  }
}

export class KeySourceUnavailable extends Error {
  override name = 'KeySourceUnavailable';
}
