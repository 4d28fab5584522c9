/**
 * The plain structures an ONNX ModelProto is read into (onnx.ts): only the parts a graph
 * interpreter needs. No behaviour.
 */

export interface OnnxTensorProto {
  name: string;
  /** TensorProto.DataType (the codes the interpreter knows: program-prepare.ts DTYPES). */
  dataType: number;
  dims: number[];
  /** Inline little-endian bytes (raw_data). */
  raw?: Uint8Array;
  /** float_data / int32_data / int64_data when the writer used the typed fields. */
  floats?: number[];
  int32s?: number[];
  int64s?: bigint[];
  external?: { location: string; offset: number; length: number | null };
}

export type OnnxAttribute =
  | { kind: 'float'; value: number }
  | { kind: 'int'; value: number }
  | { kind: 'string'; value: string }
  | { kind: 'tensor'; value: OnnxTensorProto }
  | { kind: 'floats'; value: number[] }
  | { kind: 'ints'; value: number[] }
  | { kind: 'strings'; value: string[] }
  | { kind: 'graph' };

export interface OnnxNode {
  opType: string;
  /** '' for the default domain (ai.onnx). */
  domain: string;
  name: string;
  inputs: string[];
  outputs: string[];
  attributes: Map<string, OnnxAttribute>;
}

export interface OnnxValueInfo {
  name: string;
  elemType: number;
  shape: Array<number | string> | null;
}

export interface OnnxGraph {
  name: string;
  nodes: OnnxNode[];
  initializers: OnnxTensorProto[];
  inputs: OnnxValueInfo[];
  outputs: OnnxValueInfo[];
}

export interface OnnxModel {
  irVersion: number;
  opsets: Map<string, number>;
  graph: OnnxGraph;
  metadata: Map<string, string>;
}
