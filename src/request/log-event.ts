import { AppMisuseError } from '../errors/index.js';
import { BUILT_IN_EVENT_TYPES } from '../events/recorder.js';
import { currentContext } from './request-context.js';

/** An app event type: a letter, then letters, digits and underscores (a safe CSV column, a safe key). */
const EVENT_TYPE = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/**
 * Logs an app-defined event on the current request: in the response with `include_events`, and
 * to the sink when `EVENTS_KINDS` has `CUSTOM`. Works in any pipeline code (models, business
 * logic, real-time features). `data` is serialised after the response is sent: do not change it
 * after logging it. Built-in types (MODEL, IMPRESSION, ...) are rankd's own and refused.
 *
 * @example
 * import { logEvent } from 'rankd';
 * // In pipeline code; the type: a letter, then letters, digits, _.
 * const shown = (ids: string[]) => logEvent('LOW_STOCK_SHOWN', { ids });
 */
export function logEvent(eventType: string, data: Record<string, unknown>): void {
  if (!EVENT_TYPE.test(eventType))
    throw new AppMisuseError(
      `logEvent: ${JSON.stringify(eventType)} is not an event type: a letter, then letters, digits and _ (at most 64)`,
    );
  if (BUILT_IN_EVENT_TYPES.has(eventType))
    throw new AppMisuseError(`logEvent: ${eventType} is a built-in event type; name app events differently`);
  currentContext().events.add(eventType, data);
}
