import { redisAddressForResponse, redisReasonForResponse } from '../errors/index.js';
import type { NodeOutage, OutageCause } from '../redis/outages.js';

/** A Redis Cluster master that could not serve part of a request, as a response body shows it. */
export interface DegradedNode {
  readonly node: string;
  readonly slots: string;
  readonly cause: OutageCause;
  readonly reason: string;
}

/** The `degraded` object of a ranking response (with `include_events`). */
export interface DegradedBody {
  /** Entities (candidates, the query, referenced entities, ...) whose stored values could not be read. */
  readonly entities: number;
  /** Feature rows (one per entity, or pair, and view) that could not be read. */
  readonly features: number;
  /** The masters that could not answer, each once. */
  readonly nodes: readonly DegradedNode[];
}

/**
 * What one request could not read because some masters of a Redis Cluster could not answer, and
 * so served without: such entities are ranked with the fields the request sent, such feature rows
 * read as their declared defaults, as if not found. Made only when that happens (a request that
 * read everything has none), and read by the route for the `x-rankd-degraded` header and metrics.
 *
 * @example
 * import { currentContext } from 'rankd';
 * // A step that would mislead on defaults can skip itself when feature rows went unread.
 * const readEverything = () => (currentContext().degradation?.featureRows ?? 0) === 0;
 */
export class Degradation {
  /** Entities whose stored values could not be read. */
  entities = 0;
  /** Feature rows that could not be read. */
  featureRows = 0;
  /** Entities, then feature rows, not read, by cause. */
  readonly entitiesByCause: Partial<Record<OutageCause, number>> = {};
  readonly featureRowsByCause: Partial<Record<OutageCause, number>> = {};
  /** The masters, each once (first cause and reason seen); a handful at most, for one request. */
  readonly #nodes: DegradedNode[] = [];

  /** Adds entities (index values) a read could not read, per master. */
  addEntities(outages: readonly NodeOutage[]): void {
    for (const outage of outages) {
      this.entities += outage.keys;
      this.entitiesByCause[outage.cause] = (this.entitiesByCause[outage.cause] ?? 0) + outage.keys;
      this.#addNode(outage);
    }
  }

  /** Adds feature rows a read could not read, per master. */
  addFeatureRows(outages: readonly NodeOutage[]): void {
    for (const outage of outages) {
      this.featureRows += outage.keys;
      this.featureRowsByCause[outage.cause] = (this.featureRowsByCause[outage.cause] ?? 0) + outage.keys;
      this.#addNode(outage);
    }
  }

  /** The masters that could not answer, each once. */
  get nodes(): readonly DegradedNode[] {
    return this.#nodes;
  }

  /** Every cause met, each once. */
  get causes(): OutageCause[] {
    return [...new Set(this.#nodes.map((node) => node.cause))];
  }

  /** The `x-rankd-degraded` header's value: `entities=N; features=M`. */
  header(): string {
    return `entities=${this.entities}; features=${this.featureRows}`;
  }

  /**
   * The `degraded` object of a response body; node addresses as responses may show them: only
   * with `exposeRedisAddress` (`EXPOSE_REDIS_ADDRESS=true`).
   */
  body(exposeRedisAddress = false): DegradedBody {
    return {
      entities: this.entities,
      features: this.featureRows,
      nodes: this.#nodes.map((node) => ({
        ...node,
        node: redisAddressForResponse(node.node, exposeRedisAddress),
        reason: redisReasonForResponse(node.reason, node.node, exposeRedisAddress),
      })),
    };
  }

  #addNode({ node, slots, cause, reason }: NodeOutage): void {
    if (!this.#nodes.some((known) => known.node === node)) this.#nodes.push({ node, slots, cause, reason });
  }
}
