#!/usr/bin/env node
/**
 * The Helm chart's pre-install/pre-upgrade migration Job (image target `migrate`): applies the
 * migrations of every service that owns a Postgres schema — each `services/<name>/migrations`
 * folder, into schema `<name>`, exactly as that service's own start-up does (`openDatabase` of
 * @murmur/kit, under the same per-schema advisory lock, so it is safe beside running replicas) —
 * then exits. A failed migration exits non-zero and so stops the Helm upgrade before any new
 * pod starts. Services still migrate on start; this Job only makes a bad migration fail the
 * release instead of crash-looping the new pods.
 *
 * Needs DATABASE_URL: with it unset each service keeps an embedded database of its own and
 * migrates it itself, so there is nothing to do here.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { createLogger, openDatabase } = require('@murmur/kit');

/** `services/` beside this file's `deploy/docker/`, in the repository and in the image alike. */
const SERVICES_DIR = path.resolve(__dirname, '..', '..', 'services');

/** Every service with a migrations folder, by name (its schema name), sorted. */
function servicesWithMigrations(servicesDir = SERVICES_DIR) {
  return fs
    .readdirSync(servicesDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && fs.existsSync(path.join(servicesDir, d.name, 'migrations')))
    .map((d) => ({ name: d.name, migrationsDir: path.join(servicesDir, d.name, 'migrations') }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

async function main() {
  const url = process.env.DATABASE_URL;
  if (!url) {
    process.stderr.write('migrate: DATABASE_URL is not set (with it unset each service migrates its own embedded database)\n');
    process.exit(2);
  }
  const log = createLogger('migrate', process.env.LOG_LEVEL || 'info');
  const services = servicesWithMigrations();
  if (services.length === 0) throw new Error(`no services/*/migrations under ${SERVICES_DIR}`);
  for (const { name, migrationsDir } of services) {
    const started = Date.now();
    // openDatabase creates the schema, takes the advisory lock and applies what is missing.
    const db = await openDatabase({ schema: name, migrationsDir, url, poolSize: 1, log });
    const [row] = await db.query('SELECT count(*)::int AS n FROM schema_migrations');
    await db.close();
    log.info({ schema: name, migrations: row ? row.n : 0, ms: Date.now() - started }, 'schema up to date');
  }
  log.info({ schemas: services.map((s) => s.name) }, 'migrations done');
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`migrate failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}

module.exports = { servicesWithMigrations };
