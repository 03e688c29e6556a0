import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { decodeProtectedHeader, importJWK, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { DEV_AUDIENCE, devIssuerFile, NoDevIssuerError, openDevIssuer } from '../../src/auth/dev-issuer.ts';
import { createVerifier, readPublicKeyFile } from '../../src/auth/verifier.ts';
import { createTestKeys, TEST_ISSUER } from '../support/tokens.ts';

const run = promisify(execFile);
/** A TypeScript entry point as `node --import tsx` runs it (npm scripts do the same). */
const ts = (file: string, ...args: string[]) => ['--import', 'tsx', file, ...args];
const node = process.execPath;
const schedulerDir = path.resolve(import.meta.dirname, '../..');

const claims = { tenant: 'demo', role: 'admin' as const, subject: 'dev-admin', ttlSeconds: 60 };

describe('development issuer', () => {
  it('keeps its key in DATA_DIR with owner-only permissions and accepts its own tokens', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'dev-issuer-'));
    const issuer = await openDevIssuer(dir, { create: true });
    const payload = await issuer.verifier.verify(await issuer.sign(claims));
    expect(payload).toMatchObject({ sub: 'dev-admin', tenant_id: 'demo', role: 'admin' });
    expect(statSync(path.join(dir, 'dev-issuer.json')).mode & 0o777).toBe(0o600);
    // Reopening the same directory keeps the same key and issuer.
    const again = await openDevIssuer(dir, { create: true });
    await expect(again.verifier.verify(await issuer.sign(claims))).resolves.toBeTruthy();
  });

  it('mints tokens that no other issuer configuration accepts', async () => {
    const issuer = await openDevIssuer(mkdtempSync(path.join(tmpdir(), 'dev-issuer-')), { create: true });
    const other = await openDevIssuer(mkdtempSync(path.join(tmpdir(), 'dev-issuer-')), { create: true });
    const token = await issuer.sign(claims);
    await expect(other.verifier.verify(token)).rejects.toMatchObject({ name: 'TokenRejected' });
    const keys = await createTestKeys();
    const external = createVerifier({
      issuer: TEST_ISSUER,
      publicKey: readPublicKeyFile(keys.publicKeyFile),
    });
    await expect(external.verify(token)).rejects.toMatchObject({ name: 'TokenRejected' });
  });

  it('accepts the OpenID provider at /dev-issuer on any loopback origin as the same issuer', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'dev-issuer-'));
    const issuer = await openDevIssuer(dir, { create: true });
    const key = await importJWK(issuer.privateJwk, 'EdDSA');
    const signed = (iss: string) =>
      new SignJWT({ tenant_id: 'demo', role: 'employee' })
        .setProtectedHeader({ alg: 'EdDSA' })
        .setIssuer(iss)
        .setAudience(DEV_AUDIENCE)
        .setSubject('demo-employee-1')
        .setExpirationTime('1m')
        .sign(key);
    for (const iss of [
      'http://127.0.0.1:8080/dev-issuer',
      'http://localhost:41234/dev-issuer',
      'http://[::1]:8080/dev-issuer',
      'http://127.0.0.2/dev-issuer',
    ]) {
      await expect(issuer.verifier.verify(await signed(iss))).resolves.toMatchObject({ iss });
    }
    for (const iss of [
      'http://scheduler.example.com/dev-issuer',
      'http://127.0.0.1:8080/dev-issuer/',
      'http://127.0.0.1:8080/other',
      'http://127.0.0.1.nip.io/dev-issuer',
      'ftp://127.0.0.1/dev-issuer',
      'urn:scheduler:dev-issuer:0000',
    ]) {
      await expect(issuer.verifier.verify(await signed(iss))).rejects.toMatchObject({
        name: 'TokenRejected',
        reason: 'unexpected issuer',
      });
    }
    // Ids derive from the stored name whichever of the two signed.
    expect(issuer.verifier.issuer).toBe(issuer.issuer);
  });

  it('prints a usable token from `npm run token`', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'dev-issuer-'));
    // The server creates the issuer on its first start; the command uses that one.
    await openDevIssuer(dir, { create: true });
    const { stdout } = await run(node, ts('src/cli/token.ts', '--role', 'employee', '--tenant', 'acme'), {
      cwd: schedulerDir,
      env: { ...process.env, DATA_DIR: dir },
    });
    const issuer = await openDevIssuer(dir, { create: false });
    expect(await issuer.verifier.verify(stdout.trim())).toMatchObject({
      role: 'employee',
      tenant_id: 'acme',
    });
  });

  it('refuses to invent an issuer no server uses, and says where it looked', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'dev-issuer-'));
    const failure = await run(node, ts('src/cli/token.ts', '--role', 'admin'), {
      cwd: schedulerDir,
      env: { ...process.env, DATA_DIR: dir },
    }).catch((e) => e);
    expect(failure.code).toBe(2);
    expect(failure.stdout).toBe('');
    expect(failure.stderr).toContain(`no development issuer at ${path.join(dir, 'dev-issuer.json')}`);
    expect(existsSync(path.join(dir, 'dev-issuer.json'))).toBe(false);
  });

  it('refuses an unknown role with exit code 2', async () => {
    const failure = await run(node, ts('src/cli/token.ts', '--role', 'root'), { cwd: schedulerDir }).catch(
      (e) => e,
    );
    expect(failure.code).toBe(2);
    expect(failure.stderr).toMatch(/--role must be one of admin, employee, customer/);
  });
});

describe('development issuer, in process', () => {
  it('creates its directory, names itself with a random urn, and signs with what it is given', async () => {
    const dir = path.join(mkdtempSync(path.join(tmpdir(), 'dev-issuer-')), 'nested', 'data');
    const issuer = await openDevIssuer(dir, { create: true });
    expect(issuer.verifier.issuer).toMatch(/^urn:scheduler:dev-issuer:[0-9a-f]{24}$/);
    expect(devIssuerFile(dir)).toBe(path.join(dir, 'dev-issuer.json'));
    const token = await issuer.sign({
      tenant: 'demo',
      role: 'customer',
      subject: 'c-1',
      customer: 'cust-1',
      name: 'Cy',
      email: 'cy@demo.test',
      ttlSeconds: 120,
    });
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'EdDSA', typ: 'JWT' });
    const payload = await issuer.verifier.verify(token);
    expect(payload).toEqual({
      tenant_id: 'demo',
      role: 'customer',
      customer_id: 'cust-1',
      name: 'Cy',
      email: 'cy@demo.test',
      iss: issuer.verifier.issuer,
      aud: DEV_AUDIENCE,
      sub: 'c-1',
      iat: expect.any(Number),
      exp: expect.any(Number),
    });
    expect(DEV_AUDIENCE).toBe('scheduler-dev');
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(120);
    expect(Math.abs((payload.iat ?? 0) - Date.now() / 1000)).toBeLessThan(60);
  });

  it('leaves out the claims it is not given', async () => {
    const issuer = await openDevIssuer(mkdtempSync(path.join(tmpdir(), 'dev-issuer-')), { create: true });
    const payload = await issuer.verifier.verify(await issuer.sign(claims));
    expect(Object.keys(payload).sort()).toEqual(['aud', 'exp', 'iat', 'iss', 'role', 'sub', 'tenant_id']);
  });

  it('never replaces an issuer another start created meanwhile', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'dev-issuer-'));
    const opened = await Promise.allSettled([0, 1, 2].map(() => openDevIssuer(dir, { create: true })));
    const issuers = opened.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    expect(issuers.length).toBeGreaterThan(0);
    const current = await openDevIssuer(dir, { create: false });
    for (const issuer of issuers) {
      await expect(current.verifier.verify(await issuer.sign(claims))).resolves.toMatchObject({
        sub: 'dev-admin',
      });
    }
  });

  it('refuses to create an issuer when only asked to open one, naming the file', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'dev-issuer-'));
    const error = await openDevIssuer(dir, { create: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NoDevIssuerError);
    expect(error).toMatchObject({
      name: 'NoDevIssuerError',
      file: path.join(dir, 'dev-issuer.json'),
      message: `no development issuer at ${path.join(dir, 'dev-issuer.json')}`,
    });
    expect(existsSync(path.join(dir, 'dev-issuer.json'))).toBe(false);
  });
});
