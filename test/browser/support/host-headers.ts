/**
 * The header sets of docs/deploy.md, read from the doc itself and served exactly as written:
 * nginx and Caddy run for real (Debian's packages); Netlify's and Cloudflare Pages' `_headers`
 * and Vercel's `vercel.json` are applied by a static server following those hosts' documented
 * matching rules (every matching `_headers` block adds its headers; every matching Vercel
 * `source` adds its headers), since their platforms cannot run in a test.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import { createConnection, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { staticHandler } from '../../../src/node/static/server.js';
import { headersFor, type HeaderRule } from '../../../src/node/static/headers.js';
import { spawnGroup, stopGroup } from '../../support/processes.js';

const ROOT = resolve(import.meta.dirname, '../../..');

/** Each `### Host` section of docs/deploy.md's host list: its first fenced block. */
export function documentedSets(): Map<string, { lang: string; text: string }> {
  const doc = readFileSync(join(ROOT, 'docs/deploy.md'), 'utf8');
  const sets = new Map<string, { lang: string; text: string }>();
  const hosts = doc.slice(doc.indexOf('## The headers for each host'));
  for (const section of hosts
    .slice(0, hosts.indexOf('\n## ', 1) >>> 0)
    .split(/^### /m)
    .slice(1)) {
    const title = section.slice(0, section.indexOf('\n')).trim();
    const block = /^```(\w*)\n([\s\S]*?)^```/m.exec(section);
    if (block) sets.set(title, { lang: block[1]!, text: block[2]! });
  }
  return sets;
}

/** A documented set, or a throw naming the section the doc lacks. */
export function documentedSet(title: string): string {
  const set = documentedSets().get(title);
  if (!set) throw new Error(`docs/deploy.md has no "### ${title}" section with a code block`);
  return set.text;
}

/** A `_headers` file (Netlify, Cloudflare Pages): a path line, then indented `Name: value`. */
export function parseHeadersFile(text: string): HeaderRule[] {
  const rules: Array<{ path: string; headers: Record<string, string> }> = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.trim().startsWith('#')) continue;
    if (!/^\s/.test(line)) {
      rules.push({ path: line.trim(), headers: {} });
      continue;
    }
    const colon = line.indexOf(':');
    const rule = rules.at(-1);
    if (!rule || colon < 0) throw new Error(`_headers: not a header line: ${line}`);
    rule.headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return rules;
}

/** `vercel.json`'s headers: each `source` (a path-to-regexp pattern) as a whole-path match. */
export function vercelHeaders(json: string): (pathname: string) => Record<string, string> {
  const config = JSON.parse(json) as {
    headers: Array<{ source: string; headers: Array<{ key: string; value: string }> }>;
  };
  const rules = config.headers.map((h) => ({
    // `/(.*)` and `/ort/(.*)`: literal segments and one regex group.
    match: new RegExp(`^${h.source.replace(/\/(?!\()/g, '\\/')}$`),
    headers: Object.fromEntries(h.headers.map((x) => [x.key, x.value])),
  }));
  return (pathname) => {
    const out: Record<string, string> = {};
    for (const rule of rules) if (rule.match.test(pathname)) Object.assign(out, rule.headers);
    return out;
  };
}

export interface RunningHost {
  origin: string;
  close(): Promise<void>;
}

/** `site` served by node:http with the headers `headers` gives each path. */
export async function ruleHost(
  site: string,
  headers: (pathname: string) => Record<string, string>,
): Promise<RunningHost> {
  const server = createServer(staticHandler(site, { headers }));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** `_headers` rules as a host applies them: every matching block adds its headers. */
export const headersFileHost = (site: string, text: string) => {
  const rules = parseHeadersFile(text);
  return ruleHost(site, (pathname) => headersFor(pathname, rules));
};

/** Resolves once something accepts connections on 127.0.0.1:`port`. */
async function listening(port: number, what: string, output: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const up = await new Promise<boolean>((done) => {
      const socket = createConnection({ host: '127.0.0.1', port }, () => {
        socket.end();
        done(true);
      });
      socket.on('error', () => done(false));
    });
    if (up) return;
    if (Date.now() > deadline) throw new Error(`${what} did not listen on ${port}:\n${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A port no one listens on now (the OS's choice). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** Starts `cmd` in its own group and waits for `port`; the host stops it and removes `dir`. */
async function runServer(
  cmd: string,
  args: string[],
  port: number,
  dir: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RunningHost> {
  const child = spawnGroup(cmd, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d) => (output += d));
  child.stderr?.on('data', (d) => (output += d));
  const close = async () => {
    await stopGroup(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await listening(port, cmd, () => output);
  } catch (e) {
    await close();
    throw e;
  }
  return { origin: `http://127.0.0.1:${port}`, close };
}

const INSTALL = (what: string) =>
  `${what} is not installed: the deploy test serves docs/deploy.md's ${what} configuration with ` +
  `the real server. Install Debian's: sudo apt-get install ${what === 'nginx' ? 'nginx-light' : what}`;

/**
 * Real nginx with the documented `server` block: only its `listen` and `root` point at the
 * test's port and site; the rest (a daemon's pid, logs and temp paths) goes around it.
 */
export async function nginxHost(site: string, serverBlock: string): Promise<RunningHost> {
  if (!existsSync('/usr/sbin/nginx')) throw new Error(INSTALL('nginx'));
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'clef-nginx-'));
  // Started as root, nginx reads files as `nobody`: the site's temporary folder (0700) opens up.
  chmodSync(site, 0o755);
  for (const t of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, t));
  symlinkSync('/etc/nginx/mime.types', join(dir, 'mime.types'));
  const block = serverBlock
    .replace(/listen\s+80;/, `listen 127.0.0.1:${port};`)
    .replace(/root\s+\/srv\/app\/dist;/, `root ${site};`);
  if (!block.includes(String(port)) || !block.includes(site)) {
    throw new Error(
      'docs/deploy.md nginx block: no `listen 80;` or `root /srv/app/dist;` to point',
    );
  }
  writeFileSync(
    join(dir, 'nginx.conf'),
    `daemon off;\nworker_processes 1;\npid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;\n` +
      `events {}\nhttp {\n  access_log off;\n` +
      ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
        .map((t) => `  ${t === 'body' ? 'client_body' : t}_temp_path ${dir}/${t};\n`)
        .join('') +
      `${block}}\n`,
  );
  return runServer('/usr/sbin/nginx', ['-p', dir, '-c', join(dir, 'nginx.conf')], port, dir);
}

/**
 * Real Caddy with the documented site block: its address becomes the test's port, its root the
 * site; global options around it turn off the admin endpoint and HTTPS (a local test).
 */
export async function caddyHost(site: string, siteBlock: string): Promise<RunningHost> {
  if (!existsSync('/usr/bin/caddy')) throw new Error(INSTALL('caddy'));
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'clef-caddy-'));
  const block = siteBlock
    .replace(/^example\.com\s*\{/m, `http://127.0.0.1:${port} {`)
    .replace(/root \* \/srv\/app\/dist/, `root * ${site}`);
  if (!block.includes(String(port)) || !block.includes(site)) {
    throw new Error('docs/deploy.md Caddy block: no `example.com {` or `root * /srv/app/dist`');
  }
  writeFileSync(join(dir, 'Caddyfile'), `{\n\tadmin off\n\tauto_https off\n}\n${block}`);
  const env = { ...process.env, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir };
  return runServer(
    '/usr/bin/caddy',
    ['run', '--config', 'Caddyfile', '--adapter', 'caddyfile'],
    port,
    dir,
    env,
  );
}
