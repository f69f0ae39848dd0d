'use strict';
// Building and running deploy/helm/render (Go text/template + sprig: Helm's template engine).
const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const RENDER_SRC = path.join(__dirname, '..', 'render');
const GOCODE = '/usr/share/gocode/src';
/** Debian packages the renderer is built from (for .ci/run and the error messages). */
const APT_PACKAGES = ['golang-go', 'golang-github-masterminds-sprig-dev', 'golang-gopkg-yaml.v3-dev'];
/**
 * Where the offline checks keep the RSA keys generated certificates are signed with
 * (render/key-cache.go): made once per machine instead of ~8 per render.
 */
const KEY_CACHE = path.join(os.tmpdir(), 'murmur-helm-render-keys');

// ── 1. the renderer ─────────────────────────────────────────────────────────────────────────────

/**
 * Builds the renderer (once per source version: the binary is kept in the temp folder under the
 * hash of its source). Throws, naming the Debian packages, when Go or a library is missing.
 */
function buildRenderer() {
  const missing = [];
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
  } catch {
    missing.push('golang-go');
  }
  if (!fs.existsSync(path.join(GOCODE, 'github.com/Masterminds/sprig/functions.go'))) missing.push('golang-github-masterminds-sprig-dev');
  if (!fs.existsSync(path.join(GOCODE, 'gopkg.in/yaml.v3/yaml.go'))) missing.push('golang-gopkg-yaml.v3-dev');
  if (missing.length > 0) {
    throw new Error(
      `the Helm chart check builds its renderer with Debian's Go packages, and ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing: ` +
        `apt-get install -y ${APT_PACKAGES.join(' ')}`,
    );
  }
  const hash = crypto.createHash('sha256');
  for (const f of fs.readdirSync(RENDER_SRC).sort()) hash.update(f).update(fs.readFileSync(path.join(RENDER_SRC, f)));
  const dir = path.join(os.tmpdir(), `murmur-helm-render-${hash.digest('hex').slice(0, 16)}`);
  const binary = path.join(dir, 'render');
  if (fs.existsSync(binary)) return binary;
  // Debian installs Go libraries as GOPATH sources; sprig v3 and semver v3 are imported by their
  // module paths (…/v3), which GOPATH mode resolves through this overlay of two symlinks.
  const gopath = path.join(dir, 'gopath');
  for (const lib of ['sprig', 'semver']) {
    const parent = path.join(gopath, 'src/github.com/Masterminds', lib);
    fs.mkdirSync(parent, { recursive: true });
    const link = path.join(parent, 'v3');
    if (!fs.existsSync(link)) fs.symlinkSync(path.join(GOCODE, 'github.com/Masterminds', lib), link);
  }
  const tmpBinary = `${binary}.${process.pid}`;
  try {
    execFileSync('go', ['build', '-o', tmpBinary, '.'], {
      cwd: RENDER_SRC,
      env: {
        ...process.env,
        GO111MODULE: 'off',
        GOPATH: `${gopath}${path.delimiter}/usr/share/gocode`,
        GOFLAGS: '',
        GOPROXY: 'off',
        GOCACHE: process.env.GOCACHE || path.join(os.tmpdir(), 'murmur-go-build-cache'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (err) {
    throw new Error(`building deploy/helm/render failed:\n${String(err.stderr || err.message)}`);
  }
  fs.renameSync(tmpBinary, binary);
  return binary;
}

function runRenderer(binary, args) {
  try {
    return execFileSync(binary, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const e = new Error(String(err.stderr || err.message).trim());
    e.renderFailed = true;
    throw e;
  }
}

module.exports = { APT_PACKAGES, KEY_CACHE, buildRenderer, runRenderer };
