import type { TSchema } from 'typebox';
import type { EntityType } from '../../entities/define-entity.js';
import type { FeatureView } from '../../features/define-feature-view.js';
import { type FeatureKind, featureSpecOf } from '../../features/feature-kind.js';
import type { CellParser, ColumnParsers } from './csv.js';

// Plain decimal notation only: Number() would also take '0x1f', 'Infinity' and surrounding spaces.
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const BOOLEANS: Readonly<Record<string, boolean>> = { true: true, false: false, '1': true, '0': false };

// A cell that does not parse is passed on as text, so that the upload's own validation refuses it
// with the message the HTTP endpoint would give, instead of the loader having rules of its own.
const asText: CellParser = (cell) => cell;

const asNumber: CellParser = (cell) => {
  const text = cell.trim();
  return DECIMAL.test(text) ? Number(text) : cell;
};

const asBoolean: CellParser = (cell) => {
  const word = cell.trim().toLowerCase();
  return Object.hasOwn(BOOLEANS, word) ? BOOLEANS[word] : cell;
};

const asJson: CellParser = (cell) => {
  try {
    return JSON.parse(cell);
  } catch {
    return cell;
  }
};

/** A vector: JSON array text, or numbers separated by spaces, semicolons or commas. */
const asVector: CellParser = (cell) => {
  const text = cell.trim();
  if (text.startsWith('[')) return asJson(text);
  const items = text.split(/[\s;,]+/).filter((item) => item.length > 0);
  return items.every((item) => DECIMAL.test(item)) ? items.map(Number) : cell;
};

/** An event time: digits are ms since the epoch, anything else is left for the ISO 8601 parser. */
const asTimestamp: CellParser = (cell) => (/^\d+$/.test(cell.trim()) ? Number(cell.trim()) : cell);

const FEATURE_CELLS: Readonly<Record<FeatureKind, CellParser>> = {
  float: asNumber,
  integer: asNumber,
  boolean: asBoolean,
  string: asText,
  vector: asVector,
};

/**
 * How a feature file's CSV columns are read, by the view's declaration: float and integer as
 * decimal numbers, boolean as true/false/1/0 (any case), string as is, vector as above;
 * `entity_id` as text (for a pair view, a JSON array such as `["p1","u1"]`), `event_timestamp`
 * as ms since the epoch when it is digits, else as ISO 8601 text. Other columns stay text and are
 * refused as unknown features.
 */
export function featureColumns(view: FeatureView): ColumnParsers {
  return (column) => {
    if (column === 'entity_id') return view.entityTypes.length === 1 ? asText : asJson;
    if (column === 'event_timestamp') return asTimestamp;
    const spec = featureSpecOf(view.features, column);
    return spec === undefined ? asText : FEATURE_CELLS[spec.kind];
  };
}

/** The JSON types a field's schema admits (through unions), e.g. `number` and `null` for a nullable number. */
function schemaTypes(schema: TSchema | undefined, into = new Set<string>()): Set<string> {
  if (schema === undefined) return into;
  const { type, anyOf, oneOf } = schema as { type?: unknown; anyOf?: TSchema[]; oneOf?: TSchema[] };
  if (typeof type === 'string') into.add(type);
  else if (Array.isArray(type)) for (const t of type) into.add(String(t));
  for (const member of [...(anyOf ?? []), ...(oneOf ?? [])]) schemaTypes(member, into);
  return into;
}

/** How one declared field's cells are read. */
function entityCell(schema: TSchema | undefined): CellParser {
  const types = schemaTypes(schema);
  // A field that may be a string keeps its cells as text: "007" must not become 7.
  if (types.size === 0 || types.has('string')) return asText;
  if (types.has('number') || types.has('integer')) return asNumber;
  if (types.has('boolean')) return asBoolean;
  if (types.has('array') || types.has('object')) return asJson;
  return asText;
}

/**
 * How an entity file's CSV columns are read: text, except fields the type declares as number or
 * integer (decimal numbers), boolean (true/false/1/0) or array/object (JSON text). The id column
 * (the type's id field or `entityKey`) is always text.
 */
export function entityColumns(type: EntityType, entityKey: string | undefined): ColumnParsers {
  const fields = type.fields as Record<string, TSchema>;
  return (column) => {
    if (column === type.idField || column === entityKey) return asText;
    return Object.hasOwn(fields, column) ? entityCell(fields[column]) : asText;
  };
}
