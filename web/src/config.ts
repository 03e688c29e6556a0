/** How the app signs in: the scheduler serves it at /app/config.json (README: APP_OIDC_*). */
export interface AppConfig {
  issuer: string;
  client_id: string | null;
  scope: string;
}

export async function loadConfig(): Promise<AppConfig> {
  const response = await fetch(new URL('config.json', document.baseURI), { cache: 'no-store' });
  if (!response.ok) throw new Error(`config.json: HTTP ${response.status}`);
  return (await response.json()) as AppConfig;
}

/** The app's own address: its routes are paths under it. */
export const appBase = new URL(import.meta.env.BASE_URL, window.location.origin).href;
