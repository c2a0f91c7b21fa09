/** The highest label grade: the trainer's `MAX_LABEL` (2^grade − 1 must stay exact in float32). */
export const MAX_GRADE = 31;

/**
 * Grades per feedback type from `type=grade,...` (`EVENTS_LABEL_GRADES`, `--grades`), e.g.
 * `purchase=3,add_to_cart=2,click=1`, each grade a whole number from 0 to {@link MAX_GRADE};
 * otherwise the reason they are not. A null-prototype object: a type named `constructor` is a type
 * like any other, not a property every object has.
 */
export function parseLabelGrades(
  text: string,
): { grades: Record<string, number>; problem?: undefined } | { problem: string } {
  const grades: Record<string, number> = Object.create(null);
  for (const part of text.split(',')) {
    const match = /^\s*([a-z][a-z0-9_]{0,63})\s*=\s*(\S*?)\s*$/.exec(part);
    if (match === null)
      return { problem: 'expected feedback types and grades such as purchase=3,add_to_cart=2,click=1' };
    const grade = match[2] as string;
    if (!/^\d+$/.test(grade) || Number(grade) > MAX_GRADE)
      return {
        problem: `${match[1]}=${grade}: a grade is a whole number from 0 to ${MAX_GRADE} (a label is a grade of relevance)`,
      };
    grades[match[1] as string] = Number(grade);
  }
  return { grades };
}
