/**
 * @murmur/app — the app's side of Murmur, never deployed as the public gateway: the admin
 * commands and the demo-library seeding, for the launcher's first run, the bench and tests.
 */
export * as admin from './admin/commands';
export * from './seed/seed-library';
export * from './seed/seed-content';
export * from './seed/seed-progress';
export * from './admin/identity';
export * from './web/config';
