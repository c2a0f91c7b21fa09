import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import type { RedisConnection } from '../../redis/connection.js';
import { errorResponses } from '../schemas/error-body.js';

/** `GET /healthcheck` (liveness, as the predecessor) and `GET /readyz` (readiness: Redis answers). */
export function registerHealthRoutes(server: FastifyInstance, redis: RedisConnection): void {
  server.get(
    '/healthcheck',
    {
      config: { access: 'public' },
      schema: {
        operationId: 'healthcheck',
        summary: 'Liveness: the process is up',
        tags: ['health'],
        response: { 200: Type.Object({ status: Type.Literal('OK') }, { title: 'HealthResponse' }) },
      },
    },
    async () => ({ status: 'OK' as const }),
  );
  server.get(
    '/readyz',
    {
      config: { access: 'public' },
      schema: {
        operationId: 'readyz',
        summary: 'Readiness: Redis answers and has room for writes; 503 with the reason when not',
        tags: ['health'],
        response: {
          200: Type.Object(
            { status: Type.Literal('ready'), redis: Type.String() },
            { title: 'ReadyResponse' },
          ),
          ...errorResponses(503),
        },
      },
    },
    async () => {
      await redis.ping();
      // Redis answers but refuses writes for memory: index uploads would fail, so not ready.
      await redis.checkMemory();
      return { status: 'ready' as const, redis: redis.address };
    },
  );
}
