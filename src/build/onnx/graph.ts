/**
 * A tiny ONNX graph builder: inputs/outputs with symbolic dims, nodes with unique names,
 * constants and initializers. Initializers above a size threshold are streamed to external
 * data files as they are added (only their name, shape and location stay in memory), so a
 * converter never holds all weights at once. `finish()` writes the .onnx next to its data.
 *
 * External data layout: `<model>.onnx.data`, then `<model>.onnx.data.1`, `.2` ... when a
 * file would exceed `maxDataFileBytes`; every tensor starts at a multiple of `alignment`.
 */
import { closeSync, openSync, writeFileSync, writeSync } from '../host/files.js';
import { basename, dirname, resolve } from '../host/paths.js';
import {
  DATA_TYPE_BYTES,
  DataType,
  encodeModel,
  typedBytes,
  type AttributeValue,
  type DataTypeCode,
  type Dim,
  type GraphData,
  type NodeData,
  type OpsetImport,
  type TensorData,
  type ValueInfo,
} from './proto.js';

/** Attribute constructors: `attr.int(1)`, `attr.float(1e-6)`, `attr.ints([0, 2, 1])` ... */
export const attr = {
  int: (value: number): AttributeValue => ({ kind: 'int', value }),
  float: (value: number): AttributeValue => ({ kind: 'float', value }),
  string: (value: string): AttributeValue => ({ kind: 'string', value }),
  ints: (value: number[]): AttributeValue => ({ kind: 'ints', value }),
  floats: (value: number[]): AttributeValue => ({ kind: 'floats', value }),
  tensor: (value: TensorData): AttributeValue => ({ kind: 'tensor', value }),
};
export type Attributes = Record<string, AttributeValue>;

export interface GraphBuilderOptions {
  /** Graph name written into the model. */
  name: string;
  /** Where `finish()` writes the model; external data files go next to it. */
  onnxPath: string;
  /** Initializers of fewer bytes stay inside the .onnx (default 1024). */
  inlineBelowBytes?: number;
  /** Start a new data file before one would grow beyond this (default 1.5 GiB). */
  maxDataFileBytes?: number;
  /** Offset alignment of each external tensor (default 64). */
  alignment?: number;
}

export interface FinishOptions {
  opsets?: OpsetImport[];
  irVersion?: number;
  producerName?: string;
  producerVersion?: string;
  docString?: string;
  metadata?: Record<string, string>;
  /** Graph outputs named here come first, in this order; the rest keep declaration order. */
  outputOrder?: string[];
  /** More models over the same initializers (their data is written once, shared). */
  variants?: GraphVariant[];
}

/**
 * A second graph over the same weights: the finished graph rewritten (other I/O types, a few
 * extra nodes), its initializers pointing into the same data files. It must sit in the main
 * model's directory, since external data locations are relative to the .onnx file.
 */
export interface GraphVariant {
  onnxPath: string;
  rewrite: (graph: GraphData) => GraphData;
  /** Metadata entries added to (or replacing) the main model's. */
  metadata?: Record<string, string>;
}

export interface WrittenModel {
  onnxPath: string;
  /** Absolute or caller-relative paths of the external data files, in order. */
  dataPaths: string[];
  /** Bytes of the .onnx file itself. */
  onnxBytes: number;
  /** Bytes written to the data files (padding included). */
  dataBytes: number;
  /** The biggest initializer: what a GPU must hold in one buffer (null: no initializers). */
  largestTensor: TensorSize | null;
  /** FinishOptions.variants as written, in order. */
  variants: Array<{ onnxPath: string; onnxBytes: number }>;
}

export interface TensorSize {
  name: string;
  bytes: number;
}

interface DataFile {
  path: string;
  location: string;
  fd: number;
  size: number;
}

/**
 * onnxruntime-web addresses external data with 32-bit offsets: a data file of 4 GiB or more
 * loads without an error and computes garbage (measured: NaN). Every file stays below this.
 */
export const MAX_EXTERNAL_DATA_FILE_BYTES = 2 ** 32 - 1;

const DEFAULT_OPSETS: OpsetImport[] = [
  { domain: '', version: 17 },
  { domain: 'com.microsoft', version: 1 },
];

export class GraphBuilder {
  private readonly opts: Required<GraphBuilderOptions>;
  private readonly names = new Set<string>();
  private readonly nodes: NodeData[] = [];
  private readonly inputs: ValueInfo[] = [];
  private readonly outputs: ValueInfo[] = [];
  private readonly initializers: TensorData[] = [];
  private readonly dataFiles: DataFile[] = [];
  private largest: TensorSize | null = null;
  private finished = false;

  constructor(options: GraphBuilderOptions) {
    this.opts = {
      inlineBelowBytes: 1024,
      maxDataFileBytes: 1.5 * 2 ** 30,
      alignment: 64,
      ...options,
    };
    if (this.opts.maxDataFileBytes > MAX_EXTERNAL_DATA_FILE_BYTES) {
      throw new Error(
        `maxDataFileBytes ${this.opts.maxDataFileBytes} is 4 GiB or more: onnxruntime-web cannot address such a file`,
      );
    }
  }

  /** A fresh value/node name based on `hint` (the hint itself when still free). */
  unique(hint: string): string {
    let name = hint;
    for (let k = 1; this.names.has(name); k++) name = `${hint}_${k}`;
    this.names.add(name);
    return name;
  }

  /** Declares a graph input; its name must be free. */
  input(name: string, elemType: DataTypeCode, shape: Dim[]): string {
    this.claim(name);
    this.inputs.push({ name, elemType, shape });
    return name;
  }

  /** Declares `value` as graph output `name` (an Identity is added when the names differ). */
  output(value: string, name: string, elemType: DataTypeCode, shape: Dim[]): void {
    if (value !== name) {
      this.claim(name);
      this.nodes.push({
        opType: 'Identity',
        inputs: [value],
        outputs: [name],
        name: `${name}_out`,
      });
    }
    this.outputs.push({ name, elemType, shape });
  }

  /** Adds a node; returns its output names (fresh names unless given). */
  node(
    opType: string,
    inputs: string[],
    options: {
      attrs?: Attributes;
      domain?: string;
      outputs?: number | string[];
      name?: string;
    } = {},
  ): string[] {
    const outs = options.outputs ?? 1;
    const nodeName = this.unique(options.name ?? opType);
    const outputs =
      typeof outs === 'number'
        ? Array.from({ length: outs }, (_, i) => this.unique(`${nodeName}/out${i}`))
        : outs.map((o) => (o === '' ? '' : this.claim(o)));
    this.nodes.push({
      opType,
      inputs,
      outputs,
      name: nodeName,
      ...(options.domain !== undefined ? { domain: options.domain } : {}),
      ...(options.attrs !== undefined ? { attributes: options.attrs } : {}),
    });
    return outputs;
  }

  /** Single-output node. */
  op(opType: string, inputs: string[], attrs?: Attributes, domain?: string): string {
    return this.node(opType, inputs, {
      ...(attrs !== undefined ? { attrs } : {}),
      ...(domain !== undefined ? { domain } : {}),
    })[0] as string;
  }

  /**
   * Adds an initializer from raw little-endian data; large ones are written to the data file
   * now and dropped from memory. Returns its (unique) name.
   */
  initializer(hint: string, dataType: DataTypeCode, dims: number[], data: ArrayBufferView): string {
    if (this.finished) throw new Error('graph already finished');
    const bytes = typedBytes(data);
    const count = dims.reduce((a, b) => a * b, 1);
    if (bytes.length !== count * DATA_TYPE_BYTES[dataType]) {
      throw new Error(`${hint}: ${bytes.length} bytes for dims [${dims.join(', ')}]`);
    }
    const name = this.unique(hint);
    this.noteSize(name, bytes.length);
    if (bytes.length < this.opts.inlineBelowBytes) {
      this.initializers.push({ name, dataType, dims, raw: bytes.slice() });
    } else {
      this.initializers.push({ name, dataType, dims, external: this.writeExternal(bytes) });
    }
    return name;
  }

  /**
   * Adds an external initializer whose bytes arrive in pieces (e.g. an embedding table read a
   * few thousand rows at a time); `chunks` must yield exactly the tensor's bytes, in order.
   */
  initializerFromChunks(
    hint: string,
    dataType: DataTypeCode,
    dims: number[],
    chunks: Iterable<ArrayBufferView>,
  ): string {
    if (this.finished) throw new Error('graph already finished');
    const length = dims.reduce((a, b) => a * b, 1) * DATA_TYPE_BYTES[dataType];
    const name = this.unique(hint);
    this.noteSize(name, length);
    const file = this.fileFor(length);
    const offset = this.alignFile(file);
    let written = 0;
    try {
      for (const chunk of chunks) {
        const bytes = typedBytes(chunk);
        if (written + bytes.length > length) throw new Error(`${hint}: more bytes than dims allow`);
        writeAll(file.fd, bytes);
        written += bytes.length;
      }
      if (written !== length) throw new Error(`${hint}: ${written} bytes, expected ${length}`);
    } finally {
      file.size = offset + written; // keeps later offsets right even after a failed tensor
    }
    this.initializers.push({
      name,
      dataType,
      dims,
      external: { location: file.location, offset, length },
    });
    return name;
  }

  constFloat(values: number[], dims: number[] = [values.length], hint = 'const_f'): string {
    return this.initializer(hint, DataType.FLOAT, dims, Float32Array.from(values));
  }

  constInt64(values: number[], dims: number[] = [values.length], hint = 'const_i64'): string {
    return this.initializer(hint, DataType.INT64, dims, BigInt64Array.from(values, BigInt));
  }

  /** Writes the .onnx file and closes the data files. */
  finish(options: FinishOptions = {}): WrittenModel {
    if (this.finished) throw new Error('graph already finished');
    this.finished = true;
    for (const f of this.dataFiles) closeSync(f.fd);
    const order = options.outputOrder ?? [];
    const rank = (name: string) => {
      const k = order.indexOf(name);
      return k < 0 ? order.length : k;
    };
    const outputs = [...this.outputs].sort((a, b) => rank(a.name) - rank(b.name));
    const graph: GraphData = {
      name: this.opts.name,
      nodes: this.nodes,
      inputs: this.inputs,
      outputs,
      initializers: this.initializers,
    };
    const write = (path: string, g: GraphData, metadata?: Record<string, string>): number => {
      const bytes = encodeModel({
        irVersion: options.irVersion ?? 9,
        opsets: options.opsets ?? DEFAULT_OPSETS,
        producerName: options.producerName ?? 'clef-web',
        ...(options.producerVersion !== undefined
          ? { producerVersion: options.producerVersion }
          : {}),
        ...(options.docString !== undefined ? { docString: options.docString } : {}),
        ...(metadata !== undefined ? { metadata } : {}),
        graph: g,
      });
      writeFileSync(path, bytes);
      return bytes.length;
    };
    const onnxBytes = write(this.opts.onnxPath, graph, options.metadata);
    const variants = (options.variants ?? []).map((v) => {
      if (resolve(dirname(v.onnxPath)) !== resolve(dirname(this.opts.onnxPath))) {
        throw new Error(`variant ${v.onnxPath} must sit beside ${this.opts.onnxPath}`);
      }
      const metadata =
        options.metadata || v.metadata ? { ...options.metadata, ...v.metadata } : undefined;
      return { onnxPath: v.onnxPath, onnxBytes: write(v.onnxPath, v.rewrite(graph), metadata) };
    });
    return {
      onnxPath: this.opts.onnxPath,
      dataPaths: this.dataFiles.map((f) => f.path),
      onnxBytes,
      dataBytes: this.dataFiles.reduce((a, f) => a + f.size, 0),
      largestTensor: this.largest,
      variants,
    };
  }

  /** Closes open data files without writing the model (after an error). */
  abort(): void {
    if (this.finished) return;
    this.finished = true;
    for (const f of this.dataFiles) closeSync(f.fd);
  }

  private claim(name: string): string {
    if (this.names.has(name)) throw new Error(`name ${name} already used`);
    this.names.add(name);
    return name;
  }

  /** The data file the next tensor of `length` bytes goes to (a new one when full). */
  private noteSize(name: string, bytes: number): void {
    if (this.largest === null || bytes > this.largest.bytes) this.largest = { name, bytes };
  }

  private fileFor(length: number): DataFile {
    if (length > this.opts.maxDataFileBytes) {
      // Alone in a file it would still pass the limit (and at 4 GiB, load wrongly): refuse.
      throw new Error(
        `a tensor of ${length} bytes is larger than the ${this.opts.maxDataFileBytes}-byte data file limit ` +
          '(quantise it, or keep it in a form the converter splits)',
      );
    }
    const file = this.dataFiles[this.dataFiles.length - 1];
    if (
      file !== undefined &&
      (file.size === 0 || this.padded(file.size) + length <= this.opts.maxDataFileBytes)
    ) {
      return file;
    }
    const k = this.dataFiles.length;
    const path = `${this.opts.onnxPath}.data${k === 0 ? '' : `.${k}`}`;
    const next = { path, location: basename(path), fd: openSync(path, 'w'), size: 0 };
    this.dataFiles.push(next);
    return next;
  }

  private padded(n: number): number {
    return Math.ceil(n / this.opts.alignment) * this.opts.alignment;
  }

  /** Pads the file to the alignment; returns the offset the next tensor starts at. */
  private alignFile(file: DataFile): number {
    const offset = this.padded(file.size);
    if (offset > file.size) writeAll(file.fd, new Uint8Array(offset - file.size));
    file.size = offset;
    return offset;
  }

  private writeExternal(bytes: Uint8Array): { location: string; offset: number; length: number } {
    const file = this.fileFor(bytes.length);
    const offset = this.alignFile(file);
    writeAll(file.fd, bytes);
    file.size = offset + bytes.length;
    return { location: file.location, offset, length: bytes.length };
  }
}

/** writeSync may write less than asked for very large buffers: loop until done. */
function writeAll(fd: number, bytes: Uint8Array): void {
  for (let done = 0; done < bytes.length;) {
    done += writeSync(fd, bytes, done, Math.min(bytes.length - done, 1 << 30));
  }
}
