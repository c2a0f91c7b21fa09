import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { redisAddressForResponse, redisReasonForResponse } from '../../errors/index.js';
import type { RedisConnection } from '../../redis/connection.js';
import { errorResponses } from '../schemas/error-body.js';

/**
 * `GET /healthcheck` (liveness, as the predecessor) and `GET /readyz` (readiness: Redis answers).
 * Both answer without a key, so `/readyz` names Redis's address, and the nodes of its
 * `unreachable_nodes`, only with `exposeRedisAddress`.
 * On a Redis Cluster, /readyz stays ready while some master serves: every rankd on the cluster
 * sees the same outage, and taking them all out of the load balancer during a failover would turn
 * degraded rankings into no answer at all. The masters that do not are listed. When none serves
 * (none answers, or all refuse queries: `CLUSTERDOWN`), it answers 503, as requests then do.
 */
export function registerHealthRoutes(
  server: FastifyInstance,
  redis: RedisConnection,
  exposeRedisAddress = false,
  emptyEntityTypes: () => readonly string[] = () => [],
): void {
  // Still ready: a deployment may load its catalogue through these very servers' uploads.
  const emptyIndex = () => {
    const empty = emptyEntityTypes();
    return empty.length === 0 ? {} : { empty_entity_types: [...empty] };
  };
  server.get(
    '/healthcheck',
    {
      config: { access: 'public' },
      schema: {
        operationId: 'healthcheck_healthcheck_get',
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
              empty_entity_types: Type.Optional(
                Type.Array(Type.String(), {
                  description:
                    'Entity types the app declares of which the index holds no entity (checked every minute): ' +
                    'rankings rank such candidates from the fields sent alone',
                }),
              ),
              unreachable_nodes: Type.Optional(
                Type.Array(
                  Type.Object({
                    node: Type.String({
                      description: "The master's host:port; `<address>` unless EXPOSE_REDIS_ADDRESS=true",
                    }),
                    slots: Type.String(),
                    reason: Type.String(),
                  }),
                  {
                    description:
                      'Redis Cluster masters that do not answer while others do (a failover under way): ' +
                      'requests that need their slots are served degraded or fail, as configured',
                  },
                ),
              ),
            },
            { title: 'ReadyResponse' },
          ),
          ...errorResponses(503),
        },
      },
    },
    async () => {
      const unreachable = await redis.pingAvailable();
      if (unreachable.length > 0)
        return {
          status: 'ready' as const,
          ...(exposeRedisAddress ? { redis: redis.address } : {}),
          ...emptyIndex(),
          unreachable_nodes: unreachable.map(({ node, slots, reason }) => ({
            node: redisAddressForResponse(node, exposeRedisAddress),
            slots,
            reason: redisReasonForResponse(reason, node, exposeRedisAddress),
          })),
        };
      // Redis answers but refuses writes for memory: index uploads would fail, so not ready.
      await redis.checkMemory();
      return exposeRedisAddress
        ? { status: 'ready' as const, redis: redis.address, ...emptyIndex() }
        : { status: 'ready' as const, ...emptyIndex() };
    },
  );
}
