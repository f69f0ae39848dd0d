/** The `host:port` form of every listen address a variable sets (`*_ADDR`, MURMUR_METRICS_ADDR). */

/** "host:port" or "[v6]:port"; undefined for forms that name no TCP port we can listen on (dns:…, unix:…). */
export function parseHostPort(address: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:/[\]]+)):(\d{1,5})$/.exec(address);
  if (!match) return undefined;
  const port = Number(match[3]);
  return port >= 0 && port < 65536 ? { host: match[1] ?? match[2] ?? '', port } : undefined;
}
