/**
 * The pages' templates (app/web/views, Eta with every `<%= %>` HTML-escaped) and static files
 * (app/web/static, plus Chart.js from its package). Found from the package root, so the same
 * paths work from src under jest and from dist.
 */
import * as path from 'node:path';
import { Eta } from 'eta';

/** app/web, from app/src/web or app/dist/web. */
export const WEB_DIR = path.resolve(__dirname, '..', '..', 'web');
export const STATIC_DIR = path.join(WEB_DIR, 'static');
/** Chart.js's browser build, served as /static/chart.umd.min.js. */
export const CHART_JS_FILE = path.join(path.dirname(require.resolve('chart.js')), 'chart.umd.min.js');

export const views = new Eta({ views: path.join(WEB_DIR, 'views'), autoEscape: true, cache: true, autoTrim: false });

/** What the layout needs of the signed-in person (absent on pages before sign-in). */
export interface PageContext {
  email: string;
  csrf: string;
  /** The section the page belongs to (its navigation link); 'connect' for an MCP client's consent page. */
  section: 'developer' | 'usage' | 'logs' | 'record' | 'connect';
}
