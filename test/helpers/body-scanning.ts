import Fastify from 'fastify';

/**
 * A small seeded generator (mulberry32): the same sequence for the same seed, so a failing
 * generated case is replayed from the seed the test reports.
 */
export function seededRandom(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    chance: (p: number) => next() < p,
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T,
  };
}

/** A generator made by {@link seededRandom}. */
export type SeededRandom = ReturnType<typeof seededRandom>;

const fastifyJson = Fastify().getDefaultJsonParser('error', 'error');

/**
 * A JSON body as Fastify's own JSON parser reads it (secure-json-parse, prototype keys refused):
 * what the body scanners' slow path starts from. Undefined when Fastify answers an error.
 */
export function parsedByFastify(text: string): { value: unknown } | undefined {
  let outcome: { value: unknown } | undefined;
  fastifyJson({} as never, text, (error: Error | null, value?: unknown) => {
    outcome = error === null ? { value } : undefined;
  });
  return outcome;
}
