import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import type { RedisConnection } from '../../redis/connection.js';
import { errorResponses } from '../schemas/error-body.js';

/**
 * `GET /healthcheck` (liveness, as the predecessor) and `GET /readyz` (readiness: Redis answers).
 * Both answer without a key, so `/readyz` names Redis's address only with `exposeRedisAddress`.
 */
export function registerHealthRoutes(
  server: FastifyInstance,
  redis: RedisConnection,
  exposeRedisAddress = false,
): void {
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
            {
              status: Type.Literal('ready'),
              redis: Type.Optional(
                Type.String({
                  description:
                    "Redis's host:port (a cluster's seed nodes); only with EXPOSE_REDIS_ADDRESS=true",
                }),
              ),
            },
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
      return exposeRedisAddress
        ? { status: 'ready' as const, redis: redis.address }
        : { status: 'ready' as const };
    },
  );
}
