/**
 * bench/embedded-fairness: how long another tenant's read waits on the embedded database
 * while one tenant's work holds it. Two scenarios:
 *
 *   npm run bench:embedded-fairness            the largest bulk generation (bulk.ts)
 *   npm run bench:embedded-fairness -- deliveries
 *                                              10,820 webhook deliveries draining, and a
 *                                              kill -9 and restart on that backlog
 *                                              (deliveries.ts; build the scheduler first)
 */
const scenarios = ['bulk', 'deliveries'] as const;
const scenario = process.argv[2] ?? 'bulk';
if (!(scenarios as readonly string[]).includes(scenario)) {
  console.error(`unknown scenario ${scenario}; one of ${scenarios.join(', ')}`);
  process.exit(2);
}
await import(`./${scenario}.ts`);
