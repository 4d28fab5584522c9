/**
 * `npx clef-web convert <release-dir> <out-dir> --dtype fp32|fp16|q8|q4|mixed [options]`
 */
import { existsSync, statSync } from 'node:fs';
import type { PackageDtype } from '../../core/manifest.js';
import { convertRelease } from '../build-runtime.js';
import type { BackboneGrouping } from '../../build/convert/backbone-groups.js';
import { errorText, numberOption, parseCommandArgs } from '../cli-args.js';

const DTYPES: readonly PackageDtype[] = ['fp32', 'fp16', 'q8', 'q4', 'mixed'];

export const CONVERT_USAGE = `usage: clef-web convert <release-dir> <out-dir> --dtype fp32|fp16|q8|q4|mixed
  [--name NAME] [--alias NAME]... [--revision REV] [--context TOKENS]
  [--q8-layers N] [--embedding auto|q8 (q8/q4/mixed: 8-bit embedding table only when large,
     or always)] [--fidelity N (random requests to measure: default 200, 30 for fp32; 0 skips)]
  [--backbone-group-bytes auto|0|SIZE (split the backbone into graphs of at most SIZE bytes of
     weights, e.g. 512M; auto: only above 1 GiB, in 512 MiB groups; 0: one graph)]
  [--backbone-group-layers N,N,... (split it into groups of these many layers, in order)]
  [--kv-float16 on|off (also write float16-KV backbone graphs, for shader-f16 GPUs: default on)]
  [--wasm-graphs on|off (also write the graphs optimised once for WASM, so pages skip that
     work at load: default on; needs onnxruntime-node)]`;

/** `auto`, a byte count, or one with a binary suffix (K, M, G; `512M`, `1.5G`, `256MiB`). */
export function parseGroupBytes(text: string): 'auto' | number {
  if (text === 'auto') return 'auto';
  const m = /^(\d+(?:\.\d+)?)\s*([KMG]?)(?:i?B)?$/i.exec(text.trim());
  if (!m) throw new Error(`--backbone-group-bytes ${text}: not auto or a size such as 512M`);
  const scale = { '': 1, K: 2 ** 10, M: 2 ** 20, G: 2 ** 30 }[m[2]!.toUpperCase()] as number;
  return Math.floor(Number(m[1]) * scale);
}

/** The converter's grouping from the two flags (layers win when both are given). */
export function groupingOf(bytes?: string, layers?: string): BackboneGrouping {
  if (layers !== undefined) {
    const sizes = layers.split(',').map((x) => Number(x.trim()));
    if (sizes.some((k) => !Number.isInteger(k) || k < 1)) {
      throw new Error(`--backbone-group-layers ${layers}: not a list of layer counts such as 4,4`);
    }
    return sizes;
  }
  return bytes === undefined ? 'auto' : parseGroupBytes(bytes);
}

export async function convertMain(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseCommandArgs(argv, {
      dtype: { type: 'string' },
      name: { type: 'string' },
      alias: { type: 'string', multiple: true },
      revision: { type: 'string' },
      context: { type: 'string' },
      'q8-layers': { type: 'string' },
      fidelity: { type: 'string' },
      'backbone-group-bytes': { type: 'string' },
      'backbone-group-layers': { type: 'string' },
      'kv-float16': { type: 'string' },
      'wasm-graphs': { type: 'string' },
      embedding: { type: 'string' },
    });
  } catch (e) {
    console.error(`clef-web convert: ${(e as Error).message}\n${CONVERT_USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const dtype = values.dtype as PackageDtype | undefined;
  const wrong =
    positionals.length < 2
      ? `missing ${['<release-dir>', '<out-dir>'].slice(positionals.length).join(' and ')}`
      : positionals.length > 2
        ? `one <release-dir> and one <out-dir>, not ${positionals.length} folders`
        : !dtype
          ? `missing --dtype (${DTYPES.join('|')})`
          : !DTYPES.includes(dtype)
            ? `--dtype ${dtype}: not one of ${DTYPES.join('|')}`
            : null;
  if (wrong !== null || !dtype) {
    console.error(`clef-web convert: ${wrong}\n${CONVERT_USAGE}`);
    return 2;
  }
  const [releaseDir, outDir] = positionals as [string, string];
  const kv16 = values['kv-float16'] ?? 'on';
  if (kv16 !== 'on' && kv16 !== 'off') {
    console.error(`clef-web convert: --kv-float16 ${kv16}: not on or off\n${CONVERT_USAGE}`);
    return 2;
  }
  const wasmGraphs = values['wasm-graphs'] ?? 'on';
  if (wasmGraphs !== 'on' && wasmGraphs !== 'off') {
    console.error(`clef-web convert: --wasm-graphs ${wasmGraphs}: not on or off\n${CONVERT_USAGE}`);
    return 2;
  }
  const embedding = values.embedding ?? 'auto';
  if (embedding !== 'auto' && embedding !== 'q8') {
    console.error(`clef-web convert: --embedding ${embedding}: not auto or q8\n${CONVERT_USAGE}`);
    return 2;
  }
  let backboneGroups: BackboneGrouping;
  let context: number | undefined;
  let q8Layers: number | undefined;
  let fidelity: number | undefined;
  try {
    backboneGroups = groupingOf(values['backbone-group-bytes'], values['backbone-group-layers']);
    context = numberOption('context', values.context, { integer: true, min: 1 });
    q8Layers = numberOption('q8-layers', values['q8-layers'], { integer: true, min: 0 });
    fidelity = numberOption('fidelity', values.fidelity, { integer: true, min: 0 });
    if (!existsSync(releaseDir) || !statSync(releaseDir).isDirectory()) {
      throw new Error(
        `<release-dir> ${releaseDir}: no such folder (the downloaded Clef release: config.json, tokenizer.json, *.safetensors)`,
      );
    }
  } catch (e) {
    console.error(`clef-web convert: ${(e as Error).message}\n${CONVERT_USAGE}`);
    return 2;
  }
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 50);
  const started = Date.now();
  try {
    const manifest = await convertRelease(releaseDir, outDir, {
      dtype,
      ...(values.name ? { name: values.name } : {}),
      ...(values.alias ? { aliases: values.alias } : {}),
      ...(values.revision ? { revision: values.revision } : {}),
      ...(context !== undefined ? { contextTokens: context } : {}),
      ...(q8Layers !== undefined ? { q8Layers } : {}),
      backboneGroups,
      kvFloat16: kv16 === 'on',
      wasmGraphs: wasmGraphs === 'on',
      embedding,
      // fp32 is compared with the float64 reference (seconds per request); the rest with fp32.
      fidelityRequests: fidelity ?? (dtype === 'fp32' ? 30 : 200),
      log: (line) => console.error(`[convert] ${line}`),
    });
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    const mib = (n: number) => `${(n / 1024 ** 2).toFixed(1)} MiB`;
    console.log(`package: ${outDir} (${manifest.model.name}, ${dtype})`);
    console.log(`files: ${manifest.files.length}, weights ${mib(manifest.variant.weightBytes)}`);
    const groups = (manifest.graphs as { backboneGroups?: unknown[] }).backboneGroups;
    if (groups) console.log(`backbone: ${groups.length} graphs run in order (the embedding first)`);
    console.log(
      `devices: ${manifest.variant.devices.join(', ')}; peak at full context ≤ ${mib(manifest.variant.peakBytes)}`,
    );
    if (manifest.fidelity) {
      const f = manifest.fidelity;
      console.log(
        `fidelity vs ${f.against} on ${f.requests} requests: mean |Δp| ${f.meanAbsDp.toExponential(2)}, max |Δp| ${f.maxAbsDp.toExponential(2)}, same answers ${(100 * f.sameAnswers).toFixed(1)}%`,
      );
    }
    console.log(
      `converter peak RSS ${mib(peakRss)} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    return 0;
  } catch (e) {
    console.error(`clef-web convert: ${errorText(e)}`);
    return 1;
  } finally {
    clearInterval(sampler);
  }
}
