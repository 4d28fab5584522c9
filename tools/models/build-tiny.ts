/**
 * Builds the tiny Clef fixture and converts it into the package the dev and preview servers
 * serve under /models/tiny/ (fp32) and /models/tiny-q4/ (q4), and the same release with its
 * backbone split into one graph per layer (after the embedding's) under /models/tiny-split/
 * (fp32) and /models/tiny-q4-split/ (q4), for the split tests; and the fp32 package with a
 * 1,024-token context under /models/tiny-1k/ (the same graphs and weights, only the manifest's
 * context differs), where the browser's WebGPU tests reach the end of the context in a quarter
 * of the tokens (SwiftShader runs WebGPU on the CPU, slowly); and /models/tiny-q8emb/, q4 with an
 * 8-bit embedding table (GatherBlockQuantized, as Clef-flash gets); and /models/trained-planted/,
 * what `clef-web train` makes of the planted task at its defaults (tools/train/planted.ts,
 * TRAINED_PLANTED; its release in .cache/trained-planted-release), for trained.spec.ts, and the
 * disk run playground-train.spec.ts compares the page's training with; and
 * /models/trained-negation/ (TRAINED_NEGATION: the negation task, where `auto` keeps the scope
 * layer), /models/trained-status/ (TRAINED_STATUS: the status task, where it keeps the
 * pointer) and /models/trained-clause/ (TRAINED_CLAUSE: the update task, where it keeps a clause
 * weight), for trained.spec.ts. Generated, never edited
 * by hand and never committed: `npm run models:tiny`.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeTinyFixture } from '../fixture/cli.js';
import { convertRelease } from '../../src/node/build-runtime.js';
import { trainDecisionModel } from '../../src/node/train/train.js';
import {
  clauseJsonl,
  negationJsonl,
  plantedJsonl,
  statusJsonl,
  TRAINED_CLAUSE,
  TRAINED_NEGATION,
  TRAINED_PLANTED,
  TRAINED_STATUS,
} from '../train/planted.js';

/**
 * The trained packages and their releases, at the trainer's defaults: the planted task
 * (trained.spec.ts reads both; playground-train.spec.ts compares the page's training with it)
 * the negation task, whose model has the scope layer, the status task, whose model has the
 * pointer, and the update task, whose model has a clause weight (trained.spec.ts).
 */
const TRAINED = [
  {
    dir: TRAINED_PLANTED.dir,
    release: TRAINED_PLANTED.release,
    examples: () => plantedJsonl(TRAINED_PLANTED.count, TRAINED_PLANTED.seed),
  },
  {
    dir: TRAINED_NEGATION.dir,
    release: TRAINED_NEGATION.release,
    examples: () => negationJsonl(TRAINED_NEGATION.count, TRAINED_NEGATION.seed),
  },
  {
    dir: TRAINED_STATUS.dir,
    release: TRAINED_STATUS.release,
    examples: () => statusJsonl(TRAINED_STATUS.count, TRAINED_STATUS.seed),
  },
  {
    dir: TRAINED_CLAUSE.dir,
    release: TRAINED_CLAUSE.release,
    examples: () => clauseJsonl(TRAINED_CLAUSE.count, TRAINED_CLAUSE.seed),
  },
];

const RELEASE = join('.cache', 'tiny-release');
const SPLIT = [1, 1, 1, 1];
const VARIANTS = [
  { dir: join('public', 'models', 'tiny'), dtype: 'fp32' as const },
  { dir: join('public', 'models', 'tiny-q4'), dtype: 'q4' as const },
  { dir: join('public', 'models', 'tiny-split'), dtype: 'fp32' as const, groups: SPLIT },
  { dir: join('public', 'models', 'tiny-q4-split'), dtype: 'q4' as const, groups: SPLIT },
  { dir: join('public', 'models', 'tiny-1k'), dtype: 'fp32' as const, contextTokens: 1024 },
  // q4 with the 8-bit embedding table Clef-flash-sized vocabularies get (GatherBlockQuantized).
  { dir: join('public', 'models', 'tiny-q8emb'), dtype: 'q4' as const, embedding: 'q8' as const },
];
const SEED = 1;

/** Rebuilds only when the generator's inputs changed (a stamp of seed and sources). */
function stamp(): string {
  const sources = [
    'tools/models/build-tiny.ts',
    'tools/fixture/cli.ts',
    'tools/fixture/weights.ts',
    'tools/fixture/config.ts',
    'tools/fixture/tokenizer.ts',
    'src/build/convert/package.ts',
    'src/build/convert/backbone.ts',
    'src/build/convert/backbone-layers.ts',
    'src/build/convert/backbone-ops.ts',
    'src/build/convert/backbone-groups.ts',
    'src/build/convert/head.ts',
    'src/build/convert/head-ops.ts',
    'src/build/convert/lexicon.ts',
    'src/build/convert/quantize.ts',
    'src/build/convert/prepare-wasm.ts',
    'src/build/convert/kv-float16.ts',
    'src/build/onnx/wire.ts',
    'src/build/onnx/graph.ts',
    'src/build/onnx/proto.ts',
    'tools/train/planted.ts',
    ...readdirSync('src/build/train').map((f) => join('src/build/train', f)),
    ...readdirSync('src/node/train').map((f) => join('src/node/train', f)),
  ];
  const hash = createHash('sha256').update(String(SEED));
  for (const s of sources) hash.update(readFileSync(s));
  return hash.digest('hex');
}

async function main(): Promise<void> {
  const want = stamp();
  const stampFile = join('.cache', 'tiny.stamp');
  const fresh =
    existsSync(stampFile) &&
    readFileSync(stampFile, 'utf8') === want &&
    VARIANTS.every((v) => existsSync(join(v.dir, 'manifest.json'))) &&
    TRAINED.every((t) => existsSync(join(t.dir, 'manifest.json')));
  if (fresh) {
    console.log('tiny model packages are up to date');
    return;
  }
  rmSync(RELEASE, { recursive: true, force: true });
  writeTinyFixture(RELEASE, { seed: SEED });
  for (const v of VARIANTS) {
    rmSync(v.dir, { recursive: true, force: true });
    await convertRelease(RELEASE, v.dir, {
      dtype: v.dtype,
      name: 'clef-tiny',
      aliases: ['clef-tiny-random'],
      description: 'A tiny random-weight model in the Clef layout: its answers mean nothing',
      fidelityRequests: 0,
      ...(v.groups ? { backboneGroups: v.groups } : {}),
      ...(v.contextTokens ? { contextTokens: v.contextTokens } : {}),
      ...(v.embedding ? { embedding: v.embedding } : {}),
    });
    console.log(`wrote ${v.dir} (${v.dtype})`);
  }
  for (const trained of TRAINED) {
    rmSync(trained.dir, { recursive: true, force: true });
    rmSync(trained.release, { recursive: true, force: true });
    const result = await trainDecisionModel({
      examples: trained.examples(),
      out: trained.dir,
      releaseDir: trained.release,
      fidelityRequests: 0,
    });
    const layer = [
      ...(result.selection.scope ? ['scope layer'] : []),
      ...(result.selection.pointer ? ['pointer'] : result.selection.order ? ['order layer'] : []),
      ...(result.selection.clauseWeight === null
        ? []
        : [`clause weight ${result.selection.clauseWeight}`]),
    ]
      .map((l) => `, ${l}`)
      .join('');
    console.log(`wrote ${trained.dir} (clef-web train${layer})`);
  }
  writeFileSync(stampFile, want);
}

await main();
