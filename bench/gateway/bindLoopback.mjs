// Preloaded into the peer gateway, whose start script listens on every interface: binds it to 127.0.0.1.
import * as net from "node:net"

const listen = net.Server.prototype.listen
net.Server.prototype.listen = function(...args) {
  if (typeof args[0] === "number") return listen.call(this, args[0], "127.0.0.1", ...args.slice(1).filter((a) => typeof a === "function"))
  if (args[0] !== null && typeof args[0] === "object" && args[0].path === undefined) args[0] = { ...args[0], host: "127.0.0.1" }
  return listen.apply(this, args)
}
