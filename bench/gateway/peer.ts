// The peer gateway (@portkey-ai/gateway), installed into a scratch folder, never a dependency of the project.
// On Node 20 its @hono/node-server must be the version its own lockfile names (1.13.5, with hono 4.9.7),
// or streaming and embeddings answer 500.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

export const peerVersion = "1.15.2"

const entryIn = (dir: string): string => path.join(dir, "node_modules/@portkey-ai/gateway/build/start-server.js")

/** The peer's start script when an earlier run installed it into `dir`. */
export const installedPeer = (dir: string): string | undefined => (fs.existsSync(entryIn(dir)) ? entryIn(dir) : undefined)

export const installPeer = (dir: string): string => {
  const entry = entryIn(dir)
  const manifest = {
    name: "peer-gateway-scratch",
    private: true,
    dependencies: { "@portkey-ai/gateway": peerVersion },
    overrides: { "@hono/node-server": "1.13.5", hono: "4.9.7" }
  }
  fs.mkdirSync(dir, { recursive: true })
  const manifestFile = path.join(dir, "package.json")
  const wanted = JSON.stringify(manifest, null, 2)
  if (fs.existsSync(entry) && fs.existsSync(manifestFile) && fs.readFileSync(manifestFile, "utf8") === wanted) return entry
  fs.writeFileSync(manifestFile, wanted)
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir, stdio: "inherit" })
  return entry
}

/** Headers that route a request through the peer to the simulator as a custom host of the given protocol. */
export const peerHeaders = (simulatorUrl: string, provider: "openai" | "anthropic"): Record<string, string> => ({
  "x-portkey-provider": provider,
  "x-portkey-custom-host": `${simulatorUrl}/v1`,
  authorization: "Bearer anything"
})
