/**
 * Emitted on every response still open when the shutdown grace ends, just before its connection is
 * closed (by the server's connection drain, src/http/connectionDrain.ts). A response that listens (a
 * relayed stream) ends itself with its protocol's in-band error, so that its client reads why the answer
 * stopped rather than a silent cut. Declared with the handlers that listen, which the server imports.
 */
export const graceEnded: unique symbol = Symbol("graceEnded")
