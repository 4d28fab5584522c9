/**
 * A graph program behind the session interface ClefRunner drives (SessionLike), so the page's
 * and Node's js device use the same runner, chunking, prefix cache and decision core as
 * onnxruntime's sessions. Runs are synchronous work behind a promise, as onnxruntime's WASM
 * runs are; the runner yields a task between chunks.
 */
import type { SessionLike, TensorLike } from '../core/runtime-types.js';
import { GraphProgram, type ExternalData, type ProgramOptions } from './program.js';
import { Tensor, type DType, type TensorData } from './tensor.js';

export class GraphSession implements SessionLike {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  private program: GraphProgram | null;

  constructor(program: GraphProgram) {
    this.program = program;
    this.inputNames = program.inputs.map((i) => i.name);
    this.outputNames = program.outputNames;
  }

  /**
   * Parses, checks and prepares a graph, reading its external data through `external` (throws
   * UnsupportedOpError naming what it lacks).
   */
  static async create(
    model: Uint8Array,
    external: ExternalData,
    label: string,
    options: ProgramOptions = {},
  ): Promise<GraphSession> {
    return new GraphSession(await GraphProgram.load(model, external, label, options));
  }

  /** The kernels the graph runs, in order, after the load's rewrites (diagnostics, tests). */
  get kernels(): string[] {
    return this.program?.kernels ?? [];
  }

  get label(): string {
    return this.program?.label ?? 'released graph';
  }

  async run(feeds: Record<string, TensorLike>): Promise<Record<string, TensorLike>> {
    const program = this.program;
    if (!program) throw new Error('this graph session was released');
    const inputs = new Map<string, Tensor>();
    for (const [name, t] of Object.entries(feeds)) {
      inputs.set(name, t instanceof Tensor ? t : await fromTensorLike(t));
    }
    return Object.fromEntries(program.run(inputs));
  }

  async release(): Promise<void> {
    this.program = null;
  }
}

/** Another runtime's tensor (a test feeding onnxruntime's) as the interpreter's. */
async function fromTensorLike(t: TensorLike): Promise<Tensor> {
  const data = (await t.getData()) as TensorData;
  return new Tensor(t.type as DType, t.dims, data);
}
