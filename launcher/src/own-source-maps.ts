/**
 * Preloaded into every process `npm start` runs (`node --require`): stack traces of Murmur's own
 * compiled code point at its TypeScript, where a developer reads them, while the dependencies'
 * source maps stay unread. `--enable-source-maps` would read those too and keep them in each
 * process's heap: 8.6 MB more in a service and 12.5 MB in the gateway, against 1.2–1.5 MB for
 * ours alone (docs/operations.md#source-maps). Only what is loaded after this is mapped, which
 * is why it is a preload and not a call made when a stack is about to be logged.
 */
import { setSourceMapsSupport } from 'node:module';

setSourceMapsSupport(true, { nodeModules: false });
