/**
 * What an op implementation is to the interpreter (program.ts): a type rule checked once at load
 * (so a graph the interpreter cannot run is refused before its first request), optional work
 * done once from constant inputs (packed weights), and the kernel itself.
 */
import type { OnnxAttribute } from './onnx-types.js';
import type { DType, Tensor } from './tensor.js';

/** A node's attributes, read with defaults. */
export class Attributes {
  constructor(
    private readonly map: ReadonlyMap<string, OnnxAttribute>,
    private readonly where: string,
  ) {}

  has(name: string): boolean {
    return this.map.has(name);
  }

  int(name: string, fallback?: number): number {
    const a = this.map.get(name);
    if (a?.kind === 'int') return a.value;
    if (a === undefined && fallback !== undefined) return fallback;
    throw new Error(`${this.where}: attribute ${name} must be an int`);
  }

  float(name: string, fallback?: number): number {
    const a = this.map.get(name);
    if (a?.kind === 'float') return a.value;
    if (a === undefined && fallback !== undefined) return fallback;
    throw new Error(`${this.where}: attribute ${name} must be a float`);
  }

  ints(name: string, fallback?: number[]): number[] {
    const a = this.map.get(name);
    if (a?.kind === 'ints') return a.value;
    if (a === undefined && fallback !== undefined) return fallback;
    throw new Error(`${this.where}: attribute ${name} must be a list of ints`);
  }

  string(name: string, fallback?: string): string {
    const a = this.map.get(name);
    if (a?.kind === 'string') return a.value;
    if (a === undefined && fallback !== undefined) return fallback;
    throw new Error(`${this.where}: attribute ${name} must be a string`);
  }
}

export interface OpNode {
  opType: string;
  domain: string;
  /** The node's name, or its first output's: what errors name it by. */
  name: string;
  inputs: string[];
  outputs: string[];
  attrs: Attributes;
}

/** Input types at load: undefined where an optional input is absent. */
export type InputTypes = ReadonlyArray<DType | undefined>;

export interface OpImpl {
  /**
   * The output types for these input types, or a sentence saying what the op does not
   * implement (a type, an attribute value): the graph is refused at load with it.
   */
  types(inputs: InputTypes, node: OpNode): DType[] | string;
  /** Work done once at load when some inputs are constants (weights): its result is `prepared`. */
  prepare?(node: OpNode, constants: ReadonlyArray<Tensor | undefined>): unknown;
  /** The inputs `prepare` packs whole: with a prepared result, run() never reads them. */
  readonly packs?: readonly number[];
  run(inputs: ReadonlyArray<Tensor | undefined>, node: OpNode, prepared: unknown): Tensor[];
}

/** A type rule: every listed input has one of `allowed`; the output has the first's type. */
export function sameType(allowed: readonly DType[], count = 1) {
  return (inputs: InputTypes, node: OpNode): DType[] | string => {
    const first = inputs[0];
    for (let i = 0; i < count; i++) {
      const t = inputs[i];
      if (t === undefined) return `${node.opType} needs input ${i}`;
      if (!allowed.includes(t)) return `${node.opType} on ${t} is not implemented`;
      if (t !== first) return `${node.opType} with inputs of types ${first} and ${t}`;
    }
    return [first!];
  };
}

/** The tensor at `i`, which the type check made sure is there. */
export function input(inputs: ReadonlyArray<Tensor | undefined>, i: number): Tensor {
  const t = inputs[i];
  if (t === undefined) throw new Error(`input ${i} is missing`);
  return t;
}

/** A possibly negative axis, checked against a rank. */
export function normAxis(axis: number, rank: number): number {
  const a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) throw new Error(`axis ${axis} is outside a tensor of rank ${rank}`);
  return a;
}
