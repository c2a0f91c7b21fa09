import { FEEDBACK_GRADES } from '../feedback.js';

/** The default grades: purchase 3 > add_to_cart 2 > click 1; any other feedback type grades 0. */
export const DEFAULT_LABEL_GRADES: Readonly<Record<string, number>> = FEEDBACK_GRADES;

/**
 * Grades per feedback type from `type=grade,...` (`EVENTS_LABEL_GRADES`, `--grades`), e.g.
 * `purchase=3,add_to_cart=2,click=1`; undefined when the text is not of that form.
 */
export function parseLabelGrades(text: string): Record<string, number> | undefined {
  const grades: Record<string, number> = {};
  for (const part of text.split(',')) {
    const match = /^\s*([a-z][a-z0-9_]{0,63})\s*=\s*(\d+(?:\.\d+)?)\s*$/.exec(part);
    if (match === null) return undefined;
    grades[match[1] as string] = Number(match[2]);
  }
  return grades;
}
