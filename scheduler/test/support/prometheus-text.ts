/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for tests of
 * /metrics: it throws on any line a Prometheus server would refuse (a bad metric or label
 * name, a bad escape, a sample of no declared family, a family declared twice, a value
 * that is not a float, a histogram whose buckets do not add up). Independent of
 * prom-client: a round trip through prom-client's own registry would not catch its
 * mistakes. The families come out in the shape parse-prometheus-text-format gives them.
 * That package (1.1.1, the only parser of the format on npm, unchanged for years) was
 * tried and left out: it takes `bad-name 1` and `a notanumber` as samples and loses the
 * sum, count and labels of a labelled histogram, so a test reading through it could not
 * fail on the mistakes this module exists to catch.
 */

export interface Sample {
  labels: Record<string, string>;
  value: number;
}

export interface HistogramSample {
  labels: Record<string, string>;
  /** Cumulative counts by upper bound (`le`), "+Inf" included. */
  buckets: Record<string, number>;
  count: number;
  sum: number;
}

export type MetricFamily =
  | { name: string; help: string; type: 'counter' | 'gauge' | 'untyped'; metrics: Sample[] }
  | { name: string; help: string; type: 'histogram'; metrics: HistogramSample[] };

const metricName = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const labelName = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const types = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function float(text: string, line: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (text === 'NaN') return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`not a float: ${line}`);
  return Number(text);
}

/** `{a="x",b="y"}` from `at` (the `{`): the labels and where the text after them starts. */
function readLabels(line: string, at: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = at + 1;
  for (;;) {
    if (line[i] === '}') return { labels, end: i + 1 };
    const eq = line.indexOf('=', i);
    if (eq < 0) throw new Error(`label without a value: ${line}`);
    const name = line.slice(i, eq);
    if (!labelName.test(name) || name.startsWith('__')) throw new Error(`bad label name "${name}": ${line}`);
    if (name in labels) throw new Error(`label ${name} twice: ${line}`);
    if (line[eq + 1] !== '"') throw new Error(`unquoted label value: ${line}`);
    let value = '';
    let j = eq + 2;
    for (;;) {
      const c = line[j];
      if (c === undefined) throw new Error(`unterminated label value: ${line}`);
      if (c === '"') break;
      if (c === '\\') {
        const next = line[j + 1];
        if (next === 'n') value += '\n';
        else if (next === '\\' || next === '"') value += next;
        else throw new Error(`bad escape \\${next ?? ''}: ${line}`);
        j += 2;
        continue;
      }
      value += c;
      j++;
    }
    labels[name] = value;
    i = j + 1;
    if (line[i] === ',') i++;
    else if (line[i] !== '}') throw new Error(`expected , or } after a label: ${line}`);
  }
}

interface RawSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function readSample(line: string): RawSample {
  const brace = line.indexOf('{');
  const space = line.indexOf(' ');
  const nameEnd = brace >= 0 && (space < 0 || brace < space) ? brace : space;
  if (nameEnd < 0) throw new Error(`sample without a value: ${line}`);
  const name = line.slice(0, nameEnd);
  if (!metricName.test(name)) throw new Error(`bad metric name "${name}": ${line}`);
  let rest = line.slice(nameEnd);
  let labels: Record<string, string> = {};
  if (line[nameEnd] === '{') {
    const read = readLabels(line, nameEnd);
    labels = read.labels;
    rest = line.slice(read.end);
  }
  const fields = rest.trim().split(/ +/);
  if (!rest.startsWith(' ') || fields.length < 1 || fields.length > 2) throw new Error(`bad sample: ${line}`);
  if (fields[1] !== undefined && !/^-?\d+$/.test(fields[1])) throw new Error(`bad timestamp: ${line}`);
  return { name, labels, value: float(fields[0] ?? '', line) };
}

const key = (labels: Record<string, string>) =>
  JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));

function histogram(name: string, samples: RawSample[]): HistogramSample[] {
  const series = new Map<string, HistogramSample>();
  for (const s of samples) {
    const { le, ...labels } = s.labels;
    const entry = series.get(key(labels)) ?? { labels, buckets: {}, count: Number.NaN, sum: Number.NaN };
    series.set(key(labels), entry);
    if (s.name === `${name}_bucket`) {
      if (le === undefined) throw new Error(`${name}_bucket without le`);
      entry.buckets[le] = s.value;
    } else if (le !== undefined) throw new Error(`${s.name} with le`);
    else if (s.name === `${name}_count`) entry.count = s.value;
    else if (s.name === `${name}_sum`) entry.sum = s.value;
    else throw new Error(`sample ${s.name} in histogram ${name}`);
  }
  for (const entry of series.values()) {
    const bounds = Object.keys(entry.buckets);
    if (entry.buckets['+Inf'] === undefined) throw new Error(`${name} without a +Inf bucket`);
    if (entry.buckets['+Inf'] !== entry.count) throw new Error(`${name}: +Inf bucket is not the count`);
    if (Number.isNaN(entry.sum)) throw new Error(`${name} without a sum`);
    const ordered = bounds
      .map((b) => [float(b, b), entry.buckets[b] ?? 0] as const)
      .sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < ordered.length; i++) {
      if ((ordered[i]?.[1] ?? 0) < (ordered[i - 1]?.[1] ?? 0))
        throw new Error(`${name}: buckets not cumulative`);
    }
  }
  return [...series.values()];
}

/** The families of an exposition, in order; throws on anything malformed. */
export function parsePrometheusText(text: string): MetricFamily[] {
  if (text !== '' && !text.endsWith('\n')) throw new Error('the exposition must end with a line feed');
  const declared = new Map<string, { help: string; type: string; samples: RawSample[] }>();
  const order: string[] = [];
  const family = (name: string) => {
    let f = declared.get(name);
    if (!f) {
      f = { help: '', type: 'untyped', samples: [] };
      declared.set(name, f);
      order.push(name);
    }
    return f;
  };
  let current: string | null = null;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const comment = /^#\s*(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(line);
    if (comment) {
      const [, what, name = '', rest = ''] = comment;
      if (!metricName.test(name)) throw new Error(`bad metric name "${name}": ${line}`);
      if (current !== name && declared.has(name)) throw new Error(`family ${name} declared twice`);
      current = name;
      if (what === 'TYPE') {
        if (!types.has(rest)) throw new Error(`unknown type "${rest}": ${line}`);
        if (family(name).samples.length > 0) throw new Error(`TYPE after samples: ${line}`);
        family(name).type = rest;
      } else family(name).help = rest.replace(/\\n/g, '\n').replace(/\\\\/g, '\\');
      continue;
    }
    if (line.startsWith('#')) continue;
    const sample = readSample(line);
    const owner =
      current !== null &&
      (sample.name === current ||
        (['histogram', 'summary'].includes(declared.get(current)?.type ?? '') &&
          [`${current}_bucket`, `${current}_count`, `${current}_sum`].includes(sample.name)))
        ? current
        : null;
    if (owner === null) throw new Error(`sample of no declared family: ${line}`);
    family(owner).samples.push(sample);
  }
  return order.map((name) => {
    const f = declared.get(name);
    if (!f) throw new Error(name);
    if (f.type === 'histogram')
      return { name, help: f.help, type: 'histogram', metrics: histogram(name, f.samples) };
    if (f.type === 'summary') throw new Error(`summary ${name}: not read by this parser`);
    const seen = new Set<string>();
    for (const s of f.samples) {
      if (seen.has(key(s.labels))) throw new Error(`${name}: one label set twice`);
      seen.add(key(s.labels));
    }
    return {
      name,
      help: f.help,
      type: f.type as 'counter' | 'gauge' | 'untyped',
      metrics: f.samples.map((s) => ({ labels: s.labels, value: s.value })),
    };
  });
}

/** The family `name` of a parsed exposition; throws when it is missing. */
export function familyOf(families: MetricFamily[], name: string): MetricFamily {
  const found = families.find((f) => f.name === name);
  if (!found) throw new Error(`no metric family ${name}`);
  return found;
}

/** The value of the sample of `name` whose labels include `labels`; undefined when none has them. */
export function sampleValue(
  families: MetricFamily[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const f = familyOf(families, name);
  const matches = (l: Record<string, string>) => Object.entries(labels).every(([k, v]) => l[k] === v);
  if (f.type === 'histogram') return f.metrics.find((m) => matches(m.labels))?.count;
  return f.metrics.find((m) => matches(m.labels))?.value;
}

/** The histogram family `name`; throws when it is missing or of another type. */
export function histogramOf(families: MetricFamily[], name: string): HistogramSample[] {
  const found = familyOf(families, name);
  if (found.type !== 'histogram') throw new Error(`${name} is a ${found.type}, not a histogram`);
  return found.metrics;
}
