import yaml from 'js-yaml';
import { InputProblem } from '../errors.ts';

/**
 * YAML for feed files, hardened:
 * - the core schema only (strings, numbers, booleans, null, lists, maps): no custom or
 *   binary tags, no timestamps turned into Dates, no merge keys;
 * - no anchors, and therefore no aliases: the "billion laughs" alias bomb cannot even
 *   be written down (js-yaml reports an alias to an undefined anchor);
 * - duplicate keys are errors;
 * - a size cap before parsing, so a huge document is refused without being read twice.
 */
export class YamlError extends InputProblem {
  constructor(
    message: string,
    /** 1-based line of the problem, when known. */
    readonly line: number | null,
  ) {
    super(message);
    this.name = 'YamlError';
  }
}

export const MAX_YAML_BYTES = 1024 * 1024;

interface ListenerState {
  anchor?: string | null;
  line?: number;
}

// Called as each node opens and closes. An anchor is refused at the first call that sees it:
// for an anchored block mapping or list that is its first entry, not the line after its end.
function refuseAnchors(_event: string, state: ListenerState): void {
  if (typeof state.anchor === 'string') {
    throw new YamlError(`anchors and aliases are not allowed (&${state.anchor})`, (state.line ?? 0) + 1);
  }
}

// `listener` is documented by js-yaml (called on every node's open/close) but missing
// from its type definitions.
const loadOptions: yaml.LoadOptions & { listener: (event: string, state: ListenerState) => void } = {
  schema: yaml.CORE_SCHEMA,
  json: false,
  listener: refuseAnchors,
};

export function parseYaml(text: string, maxBytes = MAX_YAML_BYTES): unknown {
  if (Buffer.byteLength(text, 'utf8') > maxBytes) {
    throw new YamlError(`document larger than ${maxBytes} bytes`, null);
  }
  try {
    return yaml.load(text, loadOptions);
  } catch (error) {
    if (error instanceof yaml.YAMLException) {
      const line = error.mark ? error.mark.line + 1 : null;
      throw new YamlError(error.reason || error.message, line);
    }
    throw error;
  }
}
