import { request } from 'undici';
import type { Alert } from './alert.ts';

/** A JSON POST of the alert; any 2xx answer is delivery. The alert id lets a receiver drop a repeat. */
export async function postWebhook(url: string, alert: Alert, timeoutMs = 15_000): Promise<void> {
  let status: number;
  try {
    const response = await request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'advisory-appliance',
        'x-advisory-alert-id': alert.id,
      },
      body: JSON.stringify(alert),
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = response.statusCode;
    await response.body.dump();
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    const name = (error as Error).name;
    throw new Error(
      name === 'TimeoutError' || name === 'AbortError'
        ? 'timed out'
        : (cause?.code ?? (error as NodeJS.ErrnoException).code ?? (error as Error).message),
    );
  }
  if (status < 200 || status > 299) throw new Error(`HTTP ${status}`);
}
