'use strict';
// Envoy type names the checks refer to.
module.exports = {
  BOOTSTRAP: 'envoy.config.bootstrap.v3.Bootstrap',
  HCM: 'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
  ROUTER: 'envoy.extensions.filters.http.router.v3.Router',
  EXT_AUTHZ: 'envoy.extensions.filters.http.ext_authz.v3.ExtAuthz',
  HTTP_PROTOCOL_OPTIONS: 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
  TYPED_STRUCTS: new Set(['xds.type.v3.TypedStruct', 'udpa.type.v1.TypedStruct']),
  TYPE_URL_PREFIX: 'type.googleapis.com/',
};
