/**
 * Every op the interpreter runs, by domain: the ops the converter writes (docs/onnx-ops.md), and
 * no others. A graph with any other op is refused at load, naming it.
 */
import type { OpImpl } from './op-types.js';
import { ELEMENTWISE_OPS } from './kernels/elementwise.js';
import { FUSED_OPS } from './kernels/fused.js';
import { FUSED } from './fuse.js';
import { LINEAR_ATTENTION_OPS } from './kernels/linear-attention.js';
import { MATMUL_OPS } from './kernels/matmul.js';
import { QUANTIZED_OPS } from './kernels/quantized.js';
import { REDUCE_OPS } from './kernels/reduce.js';
import { SHAPE_OPS } from './kernels/shape.js';

export const MICROSOFT = 'com.microsoft';

const OPS: ReadonlyMap<string, ReadonlyMap<string, OpImpl>> = new Map([
  ['', new Map(Object.entries({ ...ELEMENTWISE_OPS, ...SHAPE_OPS, ...REDUCE_OPS, ...MATMUL_OPS }))],
  [MICROSOFT, new Map(Object.entries({ ...QUANTIZED_OPS, ...LINEAR_ATTENTION_OPS }))],
]);

/** The implementation of an op a file may name, or undefined when the interpreter has none. */
export function opImpl(domain: string, opType: string): OpImpl | undefined {
  return OPS.get(domain)?.get(opType);
}

/** The implementation of a node after the load's rewrites (fuse.ts's kernels included). */
export function kernelOf(domain: string, opType: string): OpImpl | undefined {
  return domain === FUSED ? FUSED_OPS[opType] : opImpl(domain, opType);
}

/** An op's name as errors and docs write it: `MatMul`, `com.microsoft.MatMulNBits`. */
export function opName(domain: string, opType: string): string {
  return domain === '' ? opType : `${domain}.${opType}`;
}

/** Every op the interpreter implements, sorted (docs/onnx-ops.md lists the same). */
export function supportedOps(): string[] {
  const names: string[] = [];
  for (const [domain, ops] of OPS) for (const op of ops.keys()) names.push(opName(domain, op));
  return names.sort();
}

/**
 * The default domain's opsets whose semantics these kernels follow (Softmax on one axis from 13;
 * ReduceMean's axes as an attribute until 17 and as an input from 18, both read).
 */
export const DEFAULT_OPSETS = { min: 13, max: 21 } as const;
/** com.microsoft's version the converter writes. */
export const MICROSOFT_OPSET = 1;
