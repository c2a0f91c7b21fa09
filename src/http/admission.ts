import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  onSendHookHandler,
  preHandlerHookHandler,
  preSerializationHookHandler,
} from 'fastify';
import type { Config } from '../config/index.js';
import { OverloadedError } from '../errors/index.js';
import type { RankdMetrics } from '../observability/metrics.js';
import { AdmissionControl, AdmissionTicket, SHED_REASONS } from './admission-control.js';
import { requestCost } from './admission-cost.js';
import { LoopDelay } from './loop-delay.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** What admission control let this request in with; null before, and on routes it does not watch. */
    rankdAdmission: AdmissionTicket | null;
  }
}

/** How often the loop delay is read: a lag is noticed, and forgotten, within this. */
const LOOP_DELAY_WINDOW_MS = 250;

type Hook<H> = H | H[] | undefined;

function prepend<H>(hook: H, existing: Hook<H>): H[] {
  return existing === undefined ? [hook] : Array.isArray(existing) ? [hook, ...existing] : [hook, existing];
}

function append<H>(hook: H, existing: Hook<H>): H[] {
  return existing === undefined ? [hook] : Array.isArray(existing) ? [...existing, hook] : [existing, hook];
}

/**
 * Admission control on every route but the public ones (health, docs, the console): each request's
 * cost is worked out once its body is parsed and checked, before its handler runs, and it is let
 * in, made to wait or refused (admission-control.ts); it gives its room back when its response is
 * over, answered or not. Between its last stages (before its answer is serialised, and before it
 * is written) an expensive request lets the event loop serve others: those are its longest
 * stretches without a pause (a 4.8 MB answer). Off when `ADMISSION_BUDGET` is 0. Must be installed
 * before the routes.
 */
export function installAdmission(
  server: FastifyInstance,
  config: Config,
  metrics: RankdMetrics | undefined,
): AdmissionControl | undefined {
  if (config.ADMISSION_BUDGET === 0) return undefined;
  const loopDelay = new LoopDelay(LOOP_DELAY_WINDOW_MS, () => control.pump());
  const control: AdmissionControl = new AdmissionControl({
    budget: config.ADMISSION_BUDGET,
    keyShare: config.ADMISSION_KEY_SHARE,
    loopDelay,
    onShed: metrics?.registerAdmission(SHED_REASONS, () => control.stats()),
  });
  server.decorateRequest('rankdAdmission', null);
  server.addHook('onClose', async () => {
    control.close();
    loopDelay.close();
  });

  const hold = (request: FastifyRequest, reply: FastifyReply, ticket: AdmissionTicket) => {
    request.rankdAdmission = ticket;
    // 'close' comes however the response ends: sent, or its connection gone first.
    reply.raw.once('close', ticket.release);
  };
  const admit = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    let admitted: AdmissionTicket | Promise<AdmissionTicket>;
    try {
      const bytes = Number(request.headers['content-length']) || 0;
      admitted = control.admit(requestCost(request.body, bytes), request.rankdApiKey ?? undefined);
    } catch (error) {
      done(error as Error);
      return;
    }
    if (admitted instanceof AdmissionTicket) {
      hold(request, reply, admitted);
      done();
      return;
    }
    admitted.then(
      (ticket) => {
        // The client left while it waited: nobody to work for.
        if (request.raw.socket?.destroyed === true) {
          ticket.release();
          done(new OverloadedError('The client closed the connection while the request waited', 1));
          return;
        }
        hold(request, reply, ticket);
        done();
      },
      (error: Error) => done(error),
    );
  };
  const pauseIfExpensive = (
    request: FastifyRequest,
    _reply: FastifyReply,
    payload: unknown,
    done: (error: Error | null, payload?: unknown) => void,
  ) => {
    if (request.rankdAdmission?.expensive === true) setImmediate(done, null, payload);
    else done(null, payload);
  };
  server.addHook('onRoute', (route) => {
    if (route.config?.access === 'public') return;
    route.preHandler = prepend(admit as preHandlerHookHandler, route.preHandler);
    route.preSerialization = append(
      pauseIfExpensive as preSerializationHookHandler<unknown>,
      route.preSerialization as Hook<preSerializationHookHandler<unknown>>,
    );
    route.onSend = append(pauseIfExpensive as onSendHookHandler, route.onSend);
  });
  return control;
}
