import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A stand-in for Nextcloud's `occ`, for the adapter's tests: a script that answers
 * `status --output=json` and `app:list --output=json` with the documented payloads
 * (nextcloud/server core/Command/Status.php and core/Command/App/ListApps.php: status
 * keys installed, version, versionstring, edition, maintenance, needsDbUpgrade,
 * productname, extendedSupport; apps as {"enabled":{id: version},"disabled":{id: null}}),
 * or misbehaves as asked: slow (sleeps), failing (exits 1 with a PHP error), malformed
 * (prints text that is not JSON), or runs PHP under a wrapper (`slow-grandchild`, as sudo
 * does): a grandchild that holds the output open, its pid written beside the script.
 */
export type OccBehaviour = 'normal' | 'slow' | 'slow-grandchild' | 'failing' | 'malformed' | 'not-installed';

export const occStatus = {
  installed: true,
  version: '32.0.3.2',
  versionstring: '32.0.3',
  edition: '',
  maintenance: false,
  needsDbUpgrade: false,
  productname: 'Nextcloud',
  extendedSupport: false,
};

export const occApps = {
  enabled: { calendar: '5.0.6', richdocuments: '8.5.3', files_pdfviewer: '3.0.0', dav: '1.32.0' },
  disabled: { firstrunwizard: null },
};

let written = 0;

/**
 * Writes an executable fake `occ` into `dir` and returns its path. `status` and `apps`
 * are the server's state, the same objects the Nextcloud API fake can be given.
 */
export function writeOcc(
  dir: string,
  behaviour: OccBehaviour,
  status: Record<string, unknown> = occStatus,
  apps: { enabled: Record<string, string>; disabled: Record<string, null> } = occApps,
): string {
  written += 1;
  const file = path.join(dir, `occ-${behaviour}-${written}.cjs`);
  const answers = JSON.stringify({
    status: { ...status, ...(behaviour === 'not-installed' ? { installed: false } : {}) },
    apps,
  });
  writeFileSync(
    file,
    `#!/usr/bin/env node
// Fake occ (${behaviour}); argv after the script: <command> --output=json
const behaviour = ${JSON.stringify(behaviour)};
const answers = ${answers};
const [command, output] = process.argv.slice(2);
if (output !== '--output=json') { console.error('expected --output=json'); process.exit(2); }
if (behaviour === 'slow') { setTimeout(() => {}, 60_000); }
else if (behaviour === 'slow-grandchild') {
  const child = require('node:child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'inherit' });
  require('node:fs').writeFileSync(__filename + '.grandchild-pid', String(child.pid));
  setTimeout(() => {}, 60_000);
}
else if (behaviour === 'failing') { console.error('PHP Fatal error:  Allowed memory size exhausted'); process.exit(1); }
else if (behaviour === 'malformed') { console.log('Nextcloud is in maintenance mode - no apps have been loaded'); }
else if (command === 'status') { console.log(JSON.stringify(answers.status)); }
else if (command === 'app:list') { console.log(JSON.stringify(answers.apps)); }
else { console.error('Command "' + command + '" is not defined.'); process.exit(1); }
`,
  );
  chmodSync(file, 0o755);
  return file;
}

/**
 * Whether the grandchild a `slow-grandchild` run started is gone, or a zombie waiting for
 * init to reap it: either way no longer running. Waits for it up to 30 s: room for a loaded
 * machine, and still half of the minute a grandchild left alive would sleep.
 */
export async function grandchildGone(script: string): Promise<boolean> {
  const pid = Number(readFileSync(`${script}.grandchild-pid`, 'utf8'));
  const running = () => {
    try {
      return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      return false;
    }
  };
  for (let i = 0; i < 1500 && running(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  return !running();
}
