import type { AssetEvaluation } from './verdicts.ts';

/** A CVE and every asset it touches, for the dashboard's highlights. */
export interface CveHighlight {
  id: string;
  cvss: number | null;
  summary: string | null;
  advisories: string[];
  assets: string[];
}

/** The CVEs of the matching advisories, most severe first (unknown scores last), then by id. */
export function cveHighlights(evaluations: readonly AssetEvaluation[]): CveHighlight[] {
  const byId = new Map<string, CveHighlight>();
  for (const evaluation of evaluations) {
    for (const match of evaluation.matches) {
      for (const cve of match.cves) {
        let highlight = byId.get(cve.id);
        if (!highlight) {
          highlight = { id: cve.id, cvss: cve.cvss, summary: cve.summary, advisories: [], assets: [] };
          byId.set(cve.id, highlight);
        }
        if (highlight.cvss === null || (cve.cvss !== null && cve.cvss > highlight.cvss))
          highlight.cvss = cve.cvss;
        highlight.summary ??= cve.summary;
        if (!highlight.advisories.includes(match.advisoryId)) highlight.advisories.push(match.advisoryId);
        if (!highlight.assets.includes(evaluation.asset)) highlight.assets.push(evaluation.asset);
      }
    }
  }
  return [...byId.values()].sort((a, b) => (b.cvss ?? -1) - (a.cvss ?? -1) || a.id.localeCompare(b.id));
}

/** Cross-product ordering requirements: the upgrade steps blocked installs wait for, once each. */
export interface OrderingStep {
  /** "upgrade php to >=8.2.0 <8.6.0 before nextcloud 33.0.8" */
  step: string;
  product: string;
  required: string;
  reason: string;
  assets: string[];
}

export function orderingSteps(evaluations: readonly AssetEvaluation[]): OrderingStep[] {
  const steps = new Map<string, OrderingStep>();
  for (const evaluation of evaluations) {
    for (const match of evaluation.matches) {
      for (const unmet of match.unmet) {
        let step = steps.get(unmet.ordering);
        if (!step) {
          step = {
            step: unmet.ordering,
            product: unmet.product,
            required: unmet.required,
            reason: unmet.reason,
            assets: [],
          };
          steps.set(unmet.ordering, step);
        }
        if (!step.assets.includes(evaluation.asset)) step.assets.push(evaluation.asset);
      }
    }
  }
  return [...steps.values()].sort((a, b) => a.step.localeCompare(b.step));
}
