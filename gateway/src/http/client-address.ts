/**
 * The client address of a request express never handled (a WebSocket upgrade), computed by
 * express's own `req.ip` under the app's `trust proxy` setting (MURMUR_TRUSTED_PROXIES), so the
 * per-address limits (failed-keys.ts) bucket a socket's caller exactly as they bucket REST's.
 */
import type { IncomingMessage } from 'node:http';
import express, { type Express } from 'express';

const ipGetter = Object.getOwnPropertyDescriptor(express.request, 'ip')?.get;

export function clientAddressOf(app: Express, req: IncomingMessage): string | undefined {
  if (!ipGetter) throw new Error('express.request has no ip getter');
  return ipGetter.call(Object.assign(Object.create(req) as object, { app })) as string | undefined;
}
