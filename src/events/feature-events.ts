import type { FeatureValue } from '../features/feature-kind.js';
import type { EventRecorder } from './recorder.js';

/**
 * Records FEATURE events: for each candidate, each feature the model declared, with the value it
 * read (stored, computed or default; null when missing). One event per value, in the predecessor's
 * shape, keyed by the candidate (`feature_identifier`), which is how the export joins them to
 * impressions. A feature the candidate alone cannot name (a pair feature with several partners in
 * the request) is skipped rather than failing a request that already has its scores.
 */
export function recordFeatures(
  events: EventRecorder,
  read: (entity: object, name: string) => FeatureValue | null,
  candidates: ReadonlyArray<{ readonly entity: object; readonly id: string }>,
  entityType: string,
  names: readonly string[],
): void {
  const data = events.json.featureEventData(entityType);
  for (const candidate of candidates) {
    for (const name of names) {
      let value: FeatureValue | null;
      try {
        value = read(candidate.entity, name);
      } catch {
        continue;
      }
      events.addJson('FEATURE', data(candidate.id, name, value));
    }
  }
}
