import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { listModuleFiles, MANIFEST_FILE, SIGNATURE_FILE, sha256 } from './files.ts';
import { type Finding, lintFeed } from './lint.ts';
import { CURRENT_SCHEMA_VERSION, type Manifest } from './schema.ts';

export interface BuildOptions {
  feedDir: string;
  feedVersion: string;
  expiresInMs: number;
  now?: Date;
}

export type BuildResult =
  | { ok: true; manifest: Manifest; findings: Finding[]; removedSignature: boolean }
  | { ok: false; findings: Finding[] };

export function isFeedVersion(text: string): boolean {
  const match = /^(\d{4})\.(\d{2})\.(\d{2})$/.exec(text);
  if (!match) return false;
  const date = new Date(`${match[1]}-${match[2]}-${match[3]}T00:00:00Z`);
  return (
    !Number.isNaN(date.getTime()) && date.toISOString().startsWith(`${match[1]}-${match[2]}-${match[3]}`)
  );
}

/** Lints every advisory; only a clean feed gets a manifest (and any old signature goes). */
export function buildFeed(options: BuildOptions): BuildResult {
  const now = options.now ?? new Date();
  const findings = lintFeed(options.feedDir, now);
  if (findings.some((f) => f.severity === 'error')) return { ok: false, findings };

  const modules: Manifest['modules'] = {};
  for (const [module, files] of listModuleFiles(options.feedDir)) {
    modules[module] = {
      files: files.map((file) => {
        const data = readFileSync(path.join(options.feedDir, file));
        return { path: file, sha256: sha256(data), size: data.length };
      }),
    };
  }
  const manifest: Manifest = {
    schema_version: CURRENT_SCHEMA_VERSION,
    feed_version: options.feedVersion,
    published_at: new Date(Math.floor(now.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z'),
    expires_at: new Date(Math.floor((now.getTime() + options.expiresInMs) / 1000) * 1000)
      .toISOString()
      .replace('.000Z', 'Z'),
    modules,
  };
  writeFileSync(path.join(options.feedDir, MANIFEST_FILE), dumpManifest(manifest));
  // A signature over the previous manifest would only mislead: signing comes next.
  const signaturePath = path.join(options.feedDir, SIGNATURE_FILE);
  let removedSignature = false;
  try {
    rmSync(signaturePath);
    removedSignature = true;
  } catch {
    // there was none
  }
  return { ok: true, manifest, findings, removedSignature };
}

function dumpManifest(manifest: Manifest): string {
  const lines = [
    '# Advisory feed manifest: written by `advisory-feed build`, signed by `advisory-feed sign`.',
    `schema_version: "${manifest.schema_version}"`,
    `feed_version: "${manifest.feed_version}"`,
    `published_at: "${manifest.published_at}"`,
    `expires_at: "${manifest.expires_at}"`,
    'modules:',
  ];
  for (const [module, { files }] of Object.entries(manifest.modules)) {
    lines.push(`  ${module}:`, '    files:');
    for (const file of files) {
      lines.push(
        `      - path: ${file.path}`,
        `        sha256: ${file.sha256}`,
        `        size: ${file.size}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
