import { FEEDBACK_GRADES } from '../feedback.js';

/** The default grades: purchase 3 > add_to_cart 2 > click 1; any other feedback type grades 0. */
export const DEFAULT_LABEL_GRADES: Readonly<Record<string, number>> = FEEDBACK_GRADES;

/** The grade of feedback type `type` in `grades`; 0 for a type without one (own entries only). */
export function gradeOf(grades: Readonly<Record<string, number>>, type: string): number {
  return Object.hasOwn(grades, type) ? (grades[type] as number) : 0;
}
