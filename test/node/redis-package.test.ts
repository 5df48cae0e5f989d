// marketplace-app-kit/redis installs and imports without redis or ioredis: both are optional peer
// dependencies, and the entry recognises a client by its shape instead of importing either.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { isKitError } from '../../src/server/index.js';

const root = new URL('../../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as Record<string, Record<string, unknown>>;

describe('marketplace-app-kit/redis as a package', () => {
  it('lists redis and ioredis as optional peer dependencies, and as dev dependencies for its own tests', () => {
    for (const name of ['redis', 'ioredis']) {
      assert.ok(pkg.peerDependencies?.[name], `${name} is a peer dependency`);
      assert.deepEqual(pkg.peerDependenciesMeta?.[name], { optional: true });
      assert.ok(pkg.devDependencies?.[name], `${name} is a dev dependency`);
      assert.equal(pkg.dependencies?.[name], undefined, `${name} is no dependency`);
    }
  });

  it('imports neither client in the built entries: they load without them', async () => {
    for (const dir of ['dist/redis/', 'dist/server/']) {
      for (const file of readdirSync(new URL(dir, root), { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.js'))) {
        const text = readFileSync(new URL(`${dir}${file}`, root), 'utf8');
        // Code only: the doc comments' examples import a client, as an app does.
        const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
        assert.doesNotMatch(code, /from ['"](redis|ioredis|@redis\/[\w-]+)['"]|import\(['"](redis|ioredis)['"]\)|require\(['"](redis|ioredis)['"]\)/, `${dir}${file}`);
      }
    }
    const redis = await import('marketplace-app-kit/redis');
    assert.equal(typeof redis.createRedisStores, 'function');
    const conformance = await import('marketplace-app-kit/stores/conformance');
    assert.equal(typeof conformance.describeStoreConformance, 'function');
  });

  it('refuses anything but a node-redis or ioredis client with ERR_CONFIG', async () => {
    const { createRedisStores } = await import('marketplace-app-kit/redis');
    for (const client of [undefined, {}, { get: () => null }, 'redis://127.0.0.1:6379']) {
      assert.throws(() => createRedisStores({ client } as never), (error: unknown) => isKitError(error, 'ERR_CONFIG') || (error as { code?: string }).code === 'ERR_CONFIG');
    }
  });
});
