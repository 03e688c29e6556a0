import type { Translate } from '../i18n/language.ts';

/** Signed out: what the app is, and the one button that leaves for the identity provider. */
export function SignIn({
  t,
  problem,
  onSignIn,
}: {
  t: Translate;
  problem?: string | undefined;
  onSignIn?: (() => Promise<void>) | undefined;
}) {
  return (
    <main id="content" class="screen sign-in">
      <h1>{t('app.title')}</h1>
      <p class="lead">{t('signIn.heading')}</p>
      <p>{t('signIn.lead')}</p>
      {problem && (
        <p class="notice notice-refused" role="alert">
          {t('signIn.failed', { reason: problem })}
        </p>
      )}
      {onSignIn ? (
        <button type="button" class="button button-primary" onClick={() => void onSignIn()}>
          {t('signIn.button')}
        </button>
      ) : (
        <p class="notice" role="status">
          {t('signIn.notSetUp')}
        </p>
      )}
    </main>
  );
}
