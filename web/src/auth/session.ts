import { type User, UserManager, WebStorageStateStore } from 'oidc-client-ts';
import { type AppConfig, appBase } from '../config.ts';

/**
 * Sign-in with OpenID Connect, authorization code with PKCE (oidc-client-ts), against the
 * provider /app/config.json names. The session is kept in this device's storage so the app
 * opens signed in, also offline; the access token is renewed with the refresh token.
 */
export interface Session {
  /** The signed-in user, or null. */
  user(): Promise<User | null>;
  /** A current access token, renewed if it expired; null when signed out. */
  accessToken(): Promise<string | null>;
  /** Leaves for the provider's sign-in page; comes back to `returnTo`. */
  signIn(returnTo: string): Promise<void>;
  /** Completes a sign-in on /app/callback; returns where to go next. */
  completeSignIn(): Promise<string>;
  signOut(): Promise<void>;
  onChange(listener: (user: User | null) => void): void;
}

export const callbackPath = 'callback';

export function createSession(config: AppConfig & { client_id: string }): Session {
  const manager = new UserManager({
    authority: config.issuer,
    client_id: config.client_id,
    redirect_uri: new URL(callbackPath, appBase).href,
    post_logout_redirect_uri: appBase,
    response_type: 'code',
    scope: config.scope,
    userStore: new WebStorageStateStore({ store: window.localStorage }),
    // Renewed with the refresh token shortly before expiry: no hidden frames (the CSP
    // forbids framing anyway).
    automaticSilentRenew: true,
    loadUserInfo: false,
    monitorSession: false,
  });
  const listeners: ((user: User | null) => void)[] = [];
  const notify = (user: User | null) => {
    for (const listener of listeners) listener(user);
  };
  manager.events.addUserLoaded((user) => notify(user));
  manager.events.addUserUnloaded(() => notify(null));
  manager.events.addSilentRenewError(() => notify(null));

  return {
    user: () => manager.getUser(),
    async accessToken() {
      const user = await manager.getUser();
      if (!user) return null;
      if (!user.expired) return user.access_token;
      if (!navigator.onLine) return user.access_token;
      try {
        return (await manager.signinSilent())?.access_token ?? null;
      } catch {
        return null;
      }
    },
    signIn: (returnTo) => manager.signinRedirect({ state: returnTo }),
    async completeSignIn() {
      const user = await manager.signinCallback();
      const state = user?.state;
      return typeof state === 'string' && state.startsWith(appBase) ? state : appBase;
    },
    async signOut() {
      const user = await manager.getUser();
      await manager.removeUser();
      // The provider ends its own session too, when it says where (end_session_endpoint).
      const metadata = await manager.metadataService.getEndSessionEndpoint().catch(() => undefined);
      if (metadata && user?.id_token) await manager.signoutRedirect({ id_token_hint: user.id_token });
      else window.location.assign(appBase);
    },
    onChange: (listener) => {
      listeners.push(listener);
    },
  };
}
