/**
 * Encodes a tree ensemble as an ONNX model (one `ai.onnx.ml` TreeEnsembleRegressor node) without
 * any protobuf library: the handful of messages needed are written by hand, field numbers from
 * onnx/onnx.proto. Used by `npm run bench -- models` to run the same trees in onnxruntime-node.
 */
import type { SyntheticModel } from './models-synthetic.js';

/** Protobuf wire-format writer: varints, length-delimited fields, packed repeated scalars. */
class Writer {
  private chunks: Uint8Array[] = [];
  private bytes: number[] = [];
  private size = 0;

  private flushBytes(): void {
    if (this.bytes.length > 0) {
      this.chunks.push(Uint8Array.from(this.bytes));
      this.size += this.bytes.length;
      this.bytes = [];
    }
  }

  varint(value: number): this {
    let v = value;
    if (v < 0 || !Number.isSafeInteger(v))
      throw new RangeError(`varint ${value}: only non-negative integers`);
    while (v >= 0x80) {
      this.bytes.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    this.bytes.push(v);
    return this;
  }

  private tag(field: number, wireType: number): this {
    return this.varint(field * 8 + wireType);
  }

  int(field: number, value: number): this {
    return this.tag(field, 0).varint(value);
  }

  raw(field: number, data: Uint8Array): this {
    this.tag(field, 2).varint(data.length);
    this.flushBytes();
    this.chunks.push(data);
    this.size += data.length;
    return this;
  }

  string(field: number, value: string): this {
    return this.raw(field, new TextEncoder().encode(value));
  }

  message(field: number, build: (writer: Writer) => void): this {
    const inner = new Writer();
    build(inner);
    return this.raw(field, inner.finish());
  }

  packedInts(field: number, values: ArrayLike<number>): this {
    const inner = new Writer();
    for (let i = 0; i < values.length; i++) inner.varint(values[i] as number);
    return this.raw(field, inner.finish());
  }

  packedFloats(field: number, values: ArrayLike<number>): this {
    const data = new Uint8Array(values.length * 4);
    const view = new DataView(data.buffer);
    for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i] as number, true);
    return this.raw(field, data);
  }

  finish(): Uint8Array {
    this.flushBytes();
    const out = new Uint8Array(this.size);
    let offset = 0;
    for (const chunk of this.chunks) {
      out.set(chunk, offset);
      offset += chunk.length;
    }
    return out;
  }
}

// AttributeProto.AttributeType and TensorProto.DataType values.
const FLOAT_TYPE = 1;
const ATTR = { FLOATS: 6, INTS: 7, STRING: 3, STRINGS: 8, INT: 2 } as const;

type Attribute =
  | { name: string; ints: ArrayLike<number> }
  | { name: string; floats: ArrayLike<number> }
  | { name: string; strings: readonly string[] }
  | { name: string; string: string }
  | { name: string; int: number };

function writeAttribute(w: Writer, attribute: Attribute): void {
  w.string(1, attribute.name);
  if ('ints' in attribute) w.packedInts(8, attribute.ints).int(20, ATTR.INTS);
  else if ('floats' in attribute) w.packedFloats(7, attribute.floats).int(20, ATTR.FLOATS);
  else if ('strings' in attribute) {
    for (const s of attribute.strings) w.string(9, s);
    w.int(20, ATTR.STRINGS);
  } else if ('string' in attribute) w.string(4, attribute.string).int(20, ATTR.STRING);
  else w.int(3, attribute.int).int(20, ATTR.INT);
}

/** ValueInfoProto of a float tensor [N, width], N symbolic. */
function writeValueInfo(w: Writer, name: string, width: number): void {
  w.string(1, name).message(2, (type) =>
    type.message(1, (tensor) =>
      tensor.int(1, FLOAT_TYPE).message(2, (shape) => {
        shape.message(1, (dim) => dim.string(2, 'N'));
        shape.message(1, (dim) => dim.int(1, width));
      }),
    ),
  );
}

/**
 * The model's trees as a TreeEnsembleRegressor with XGBoost's semantics, which ONNX expresses
 * directly: BRANCH_LT (x < threshold, in float32) to the true (left) child, missing values to
 * the true child when `missing_value_tracks_true`, leaves summed onto `base_values`.
 */
export function onnxTreeEnsemble(model: SyntheticModel): Uint8Array {
  const treeIds: number[] = [];
  const nodeIds: number[] = [];
  const featureIds: number[] = [];
  const values: number[] = [];
  const modes: string[] = [];
  const trueIds: number[] = [];
  const falseIds: number[] = [];
  const tracksTrue: number[] = [];
  const targetTree: number[] = [];
  const targetNode: number[] = [];
  const targetWeight: number[] = [];
  model.trees.forEach((tree, t) => {
    tree.left.forEach((left, node) => {
      const leaf = left < 0;
      treeIds.push(t);
      nodeIds.push(node);
      featureIds.push(leaf ? 0 : (tree.feature[node] as number));
      values.push(leaf ? 0 : (tree.threshold[node] as number));
      modes.push(leaf ? 'LEAF' : 'BRANCH_LT');
      trueIds.push(leaf ? 0 : left);
      falseIds.push(leaf ? 0 : (tree.right[node] as number));
      tracksTrue.push(leaf ? 0 : (tree.defaultLeft[node] as number));
      if (leaf) {
        targetTree.push(t);
        targetNode.push(node);
        targetWeight.push(tree.leafValue[node] as number);
      }
    });
  });
  const attributes: Attribute[] = [
    { name: 'aggregate_function', string: 'SUM' },
    { name: 'base_values', floats: [model.baseScore] },
    { name: 'n_targets', int: 1 },
    { name: 'nodes_falsenodeids', ints: falseIds },
    { name: 'nodes_featureids', ints: featureIds },
    { name: 'nodes_missing_value_tracks_true', ints: tracksTrue },
    { name: 'nodes_modes', strings: modes },
    { name: 'nodes_nodeids', ints: nodeIds },
    { name: 'nodes_treeids', ints: treeIds },
    { name: 'nodes_truenodeids', ints: trueIds },
    { name: 'nodes_values', floats: values },
    { name: 'post_transform', string: 'NONE' },
    { name: 'target_ids', ints: targetTree.map(() => 0) },
    { name: 'target_nodeids', ints: targetNode },
    { name: 'target_treeids', ints: targetTree },
    { name: 'target_weights', floats: targetWeight },
  ];
  return new Writer()
    .int(1, 8) // ir_version
    .string(2, 'rankd-bench')
    .message(7, (graph) => {
      graph.message(1, (node) => {
        node.string(1, 'X').string(2, 'score').string(3, 'trees').string(4, 'TreeEnsembleRegressor');
        for (const attribute of attributes) node.message(5, (w) => writeAttribute(w, attribute));
        node.string(7, 'ai.onnx.ml');
      });
      graph.string(2, 'gbdt');
      graph.message(11, (w) => writeValueInfo(w, 'X', model.features));
      graph.message(12, (w) => writeValueInfo(w, 'score', 1));
    })
    .message(8, (opset) => opset.string(1, '').int(2, 17))
    .message(8, (opset) => opset.string(1, 'ai.onnx.ml').int(2, 3))
    .finish();
}
