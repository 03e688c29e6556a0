import type { FastifyError } from 'fastify';
import { patternMeanings } from '../input/text.ts';
import { isInstant } from '../time/instant.ts';
import { isCalendarDate } from '../time/window.ts';

/**
 * Validator settings. Bodies are checked exactly: no type coercion (a number sent as a
 * string is an error, not a guess), no silent removal of unknown fields (a typo in a
 * field name is reported, which matters for full-replace PATCH).
 */
export const ajvOptions = {
  customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: true, allErrors: false },
  // Every `date-time` field takes the one strict reading of time/instant.ts, which replaces
  // ajv-formats' lenient one (it accepts leap seconds and years the database refuses);
  // every `date` field a real calendar date of the years 1 to 9999.
  onCreate: (ajv: { addFormat(name: string, test: (text: string) => boolean): unknown }) => {
    ajv.addFormat('date-time', isInstant);
    ajv.addFormat('date', isCalendarDate);
  },
};

interface AjvIssue {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/** `/slots/0/role_id` -> `slots[0].role_id` */
function fieldName(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), '');
}

/** A one-line message that names the offending field, e.g. `name: must be string`. */
export function describeValidationError(error: FastifyError): string {
  const issue = (error.validation?.[0] ?? {}) as AjvIssue;
  const context = (error as FastifyError & { validationContext?: string }).validationContext ?? 'body';
  const base = fieldName(issue.instancePath ?? '');
  const join = (child: unknown) => (base ? `${base}.${String(child)}` : String(child));
  switch (issue.keyword) {
    case 'required':
      return `${join(issue.params?.missingProperty)}: is required`;
    case 'additionalProperties':
      return `${join(issue.params?.additionalProperty)}: is not an allowed field`;
    case 'enum': {
      const allowed = issue.params?.allowedValues;
      if (Array.isArray(allowed)) return `${base || context}: must be one of ${allowed.join(', ')}`;
      return `${base || context}: ${issue.message ?? 'is invalid'}`;
    }
    case 'pattern': {
      const meaning = patternMeanings[String(issue.params?.pattern)];
      return `${base || context}: ${meaning ?? issue.message ?? 'is invalid'}`;
    }
    case 'format': {
      // A value of either format (a time filter's instant or date): name every format the
      // field takes, not only the first branch's.
      const formats = new Set(
        (error.validation ?? [])
          .map((other) => other as AjvIssue)
          .filter((other) => other.keyword === 'format' && other.instancePath === issue.instancePath)
          .map((other) => other.params?.format)
          .filter((format) => typeof format === 'string'),
      );
      if (formats.size > 1)
        return `${base || context}: must match format ${[...formats].map((f) => `"${f}"`).join(' or ')}`;
      return `${base || context}: ${issue.message ?? 'is invalid'}`;
    }
    default: {
      const field = base || context;
      return `${field}: ${issue.message ?? 'is invalid'}`;
    }
  }
}
