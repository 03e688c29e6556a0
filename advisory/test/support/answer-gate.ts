import type { ServerResponse } from 'node:http';

/**
 * Slowness a test controls, for the fakes of the inventory APIs: a request whose path
 * `hold` matches is kept unanswered until the test calls `release()`, or, never released,
 * until the client gives up on it (its connection closes). A test waits for the event it
 * needs (`held` reaching a length: that many requests open at once) instead of a server
 * that sleeps a guessed while. The gate also counts the requests open at once.
 */
export interface AnswerGate {
  /** Which requests to hold (by path and query); null: none. */
  hold: ((path: string) => boolean) | null;
  /** The paths of the requests held now, in arrival order. */
  readonly held: string[];
  /** Answers every held request now; later ones are held again only if `hold` is set again. */
  release(): void;
  /** Requests open now (arrived, not yet answered or given up on). */
  readonly inFlight: number;
  /** The most requests that were open at once since the fake started (or this was reset). */
  maxInFlight: number;
}

export interface Gate extends AnswerGate {
  /** For the fake: `answer` runs now, or when the request is released. */
  admit(path: string, response: ServerResponse, answer: () => void): void;
}

export function answerGate(): Gate {
  const waiting = new Map<ServerResponse, { path: string; answer: () => void }>();
  let inFlight = 0;
  const gate: Gate = {
    hold: null,
    get held() {
      return [...waiting.values()].map((w) => w.path);
    },
    get inFlight() {
      return inFlight;
    },
    maxInFlight: 0,
    release() {
      gate.hold = null;
      const all = [...waiting.values()];
      waiting.clear();
      for (const { answer } of all) answer();
    },
    admit(path, response, answer) {
      inFlight++;
      gate.maxInFlight = Math.max(gate.maxInFlight, inFlight);
      response.once('close', () => {
        inFlight--;
        waiting.delete(response);
      });
      if (gate.hold?.(path)) waiting.set(response, { path, answer });
      else answer();
    },
  };
  return gate;
}
