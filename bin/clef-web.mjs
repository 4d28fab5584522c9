#!/usr/bin/env node
// `npx clef-web <command>`: the project's command-line tools (convert, verify, ...), written in
// TypeScript and run through tsx so a clone needs no build step first.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/node/cli.ts');
process.exitCode = await main(process.argv.slice(2));
