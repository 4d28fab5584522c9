#!/usr/bin/env node
// `npx clef-web <command>`: convert, verify, serve, decide. Runs the compiled Node product
// (dist/node); in a checkout, `npm run build:node` makes it.
import { existsSync } from 'node:fs';

const cli = new URL('../dist/node/node/cli.js', import.meta.url);
if (!existsSync(cli)) {
  console.error('clef-web: dist/node is missing (in a checkout, run `npm run build:node` first)');
  process.exit(1);
}
const { main } = await import(cli.href);
process.exitCode = await main(process.argv.slice(2));
