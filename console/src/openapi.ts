/** The pipelines of the OpenAPI document (`/openapi.json`) and their request schemas. */

/** The part of a JSON schema the console reads. */
export interface Schema {
  $ref?: string;
  type?: string;
  title?: string;
  description?: string;
  enum?: unknown[];
  default?: unknown;
  required?: string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
}

interface Operation {
  tags?: string[];
  summary?: string;
  requestBody?: { content?: { 'application/json'?: { schema?: Schema; example?: unknown } } };
}

/** The OpenAPI document, as far as the console reads it. */
export interface OpenApiDocument {
  paths: Record<string, { post?: Operation }>;
  components?: { schemas?: Record<string, Schema> };
}

/** A pipeline's route, request schema (refs resolved on demand) and example body. */
export interface PipelineInfo {
  path: string;
  summary: string;
  schema: Schema;
  example: unknown;
}

/** Follows `$ref`s into `components.schemas`. */
export function resolve(document: OpenApiDocument, schema: Schema | undefined): Schema {
  let current = schema ?? {};
  for (let hops = 0; current.$ref !== undefined && hops < 10; hops++) {
    const name = current.$ref.split('/').pop() ?? '';
    current = document.components?.schemas?.[name] ?? {};
  }
  return current;
}

/** The routes tagged `pipelines`, in the document's order. */
export function pipelinesOf(document: OpenApiDocument): PipelineInfo[] {
  const found: PipelineInfo[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    const post = item.post;
    if (post?.tags?.includes('pipelines') !== true) continue;
    const json = post.requestBody?.content?.['application/json'];
    found.push({
      path,
      summary: post.summary ?? path,
      schema: resolve(document, json?.schema),
      example: json?.example ?? {},
    });
  }
  return found;
}

/** The field that identifies a candidate (`product_id`): the one its item schema requires. */
export function candidateIdField(document: OpenApiDocument, request: Schema): string | undefined {
  const item = resolve(document, resolve(document, request.properties?.candidates).items);
  return item.required?.[0];
}
