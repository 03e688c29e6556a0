import { parseArgs } from 'node:util';
import { NoDevIssuerError, openDevIssuer } from '../auth/dev-issuer.ts';
import { accessRoles } from '../auth/identity.ts';
import { ConfigError, loadStorageConfig } from '../config.ts';
import { DEMO_TENANT, demoPeople, demoPerson } from '../dev-sign-in/people.ts';

const usage = `Usage: npm run token -w scheduler -- --role admin|employee|customer [options]

Prints a bearer token from the local development issuer (AUTH_DEV_ISSUER=true).
Only a scheduler running with the development issuer on the same DATA_DIR accepts it;
the server creates the issuer on its first start (npm start), this command never does.

Options:
  --role <role>         admin, employee or customer (required)
  --tenant <id>         tenant id or any name (default: demo)
  --user <id>           subject; any string (default: <role>-1)
  --customer <id>       customer id claim (customer tokens on pinned forms)
  --name <text>         display name claim (default: a demo person's name)
  --email <text>        email claim (default: a demo person's email)
  --ttl <minutes>       lifetime in minutes (default: 480)
  -h, --help            this text

The demo people (the development sign-in page lists them; DEMO_DATA=true seeds them):
${demoPeople.map((p) => `  --role ${p.role.padEnd(8)} --user ${p.subject.padEnd(15)} ${p.name}`).join('\n')}
A token for one of them (tenant ${DEMO_TENANT}) is for the same user as that person's sign-in.`;

async function run(argv: string[]): Promise<number> {
  let values: ReturnType<typeof parse>['values'];
  function parse(args: string[]) {
    return parseArgs({
      args,
      options: {
        role: { type: 'string' },
        tenant: { type: 'string', default: 'demo' },
        user: { type: 'string' },
        customer: { type: 'string' },
        name: { type: 'string' },
        email: { type: 'string' },
        ttl: { type: 'string', default: '480' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    });
  }
  try {
    values = parse(argv).values;
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${usage}`);
    return 2;
  }
  if (values.help) {
    console.log(usage);
    return 0;
  }
  const role = accessRoles.find((r) => r === values.role);
  if (!role) {
    console.error(`--role must be one of ${accessRoles.join(', ')}\n\n${usage}`);
    return 2;
  }
  const ttl = Number(values.ttl);
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > 60 * 24 * 30) {
    console.error('--ttl must be a whole number of minutes between 1 and 43200');
    return 2;
  }
  let issuer: Awaited<ReturnType<typeof openDevIssuer>>;
  try {
    issuer = await openDevIssuer(loadStorageConfig().dataDir, { create: false });
  } catch (error) {
    if (error instanceof NoDevIssuerError) {
      console.error(
        `token: no development issuer at ${error.file}.\n` +
          'Start the scheduler with the development issuer first (npm start), or set DATA_DIR to the\n' +
          'directory the running server uses (its DATA_DIR; scheduler/data for npm start).',
      );
      return 2;
    }
    if (error instanceof ConfigError) {
      console.error(`token: configuration error: ${error.message}`);
      return 2;
    }
    throw error;
  }
  const subject = values.user ?? `${role}-1`;
  const tenant = values.tenant ?? DEMO_TENANT;
  // The demo person's profile, as their sign-in at /dev-issuer gives it.
  const person = tenant === DEMO_TENANT ? demoPerson(subject) : undefined;
  const token = await issuer.sign({
    tenant,
    role,
    subject,
    customer: values.customer,
    name: values.name ?? person?.name,
    email: values.email ?? person?.email,
    ttlSeconds: ttl * 60,
  });
  console.log(token);
  return 0;
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`token: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
