// The standard AWS credential chain, in a module of its own so that src/services/forwarding/kinds/bedrock.ts can
// import it on demand (the SDK is CommonJS: imported here, statically, the bundle keeps its named export).
import { defaultProvider } from "@aws-sdk/credential-provider-node"

/** The chain (environment, shared files, SSO, web identity, instance metadata), caching what it found. */
export const makeCredentialChain = () => defaultProvider()
