/**
 * How many calls a real gRPC server in this process has received, from grpc-js's own channelz
 * counters (`calls_started`): a test can tell whether a route asked a service anything without
 * replacing the service's client by a stub.
 */
import { getChannelzHandlers } from '@grpc/grpc-js';
import { metricsRegistry } from './metrics';

interface ServerEntry {
  data: { calls_started: string | number };
  listen_socket: { name: string }[];
}

/** Calls started so far on the gRPC server of this process that listens on `port`. */
export async function callsServedOn(port: number): Promise<number> {
  const { GetServers } = getChannelzHandlers() as unknown as {
    GetServers(call: { request: { start_server_id: number; max_results: number } }, cb: (err: Error | null, res?: { server: ServerEntry[] }) => void): void;
  };
  const servers = await new Promise<ServerEntry[]>((resolve, reject) =>
    GetServers({ request: { start_server_id: 0, max_results: 10_000 } }, (err, res) => (err ? reject(err) : resolve(res?.server ?? []))),
  );
  const server = servers.find((s) => s.listen_socket.some((l) => l.name.endsWith(`:${port}`)));
  if (!server) throw new Error(`no gRPC server of this process listens on port ${port}`);
  return Number(server.data.calls_started);
}

/**
 * Calls of one RPC (`/murmur.auth.v1.AuthService/VerifyKey`) that the gRPC servers of this
 * process have answered, from the kit's RPC metrics: unlike {@link callsServedOn}, blind to the
 * other RPCs the same server answers meanwhile (the gateway's request-log batches to auth).
 */
export async function rpcCallsAnswered(path: string): Promise<number> {
  const [, service = '', method = ''] = path.split('/');
  const metric = await metricsRegistry().getSingleMetric('murmur_grpc_server_handled_total')?.get();
  return (metric?.values ?? []).filter((v) => v.labels.grpc_service === service && v.labels.grpc_method === method).reduce((sum, v) => sum + v.value, 0);
}
