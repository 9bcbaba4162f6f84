import { expect } from "vitest"
import { call, type RunningApp, testAdminToken } from "./app"

export interface ConsoleCallOptions {
  readonly cookie?: string | undefined
  readonly body?: unknown
  /** The Origin header; defaults to the service's own (PUBLIC_URL's). null: none. */
  readonly origin?: string | null
  readonly headers?: Record<string, string>
}

/** A console call as a browser on the service's own page would make it. */
export const consoleCall = (app: RunningApp, method: string, route: string, options: ConsoleCallOptions = {}) =>
  call(app, method, route, {
    ...(options.body !== undefined ? { body: options.body } : {}),
    headers: {
      ...(options.cookie ? { cookie: options.cookie } : {}),
      ...(options.origin === null ? {} : { origin: options.origin ?? app.origin }),
      ...options.headers
    }
  })

/** The `name=value` of the session cookie an answer set. */
export const sessionCookieOf = (headers: Headers): string => {
  const set = headers.get("set-cookie") ?? ""
  const match = /wsapi_session=([^;]*)/.exec(set)
  if (!match) throw new Error(`no session cookie in ${JSON.stringify(set)}`)
  return `wsapi_session=${match[1]}`
}

export const tokenOf = (invitationUrl: string): string => invitationUrl.split("/").at(-1)!

export const password = "correct horse battery staple"

/** Invites a new email through the admin API and accepts with a new password: the person's session cookie and member id. */
export const invitePerson = async (app: RunningApp, workspaceId: string, email: string, role: "admin" | "member", name?: string) => {
  const invited = await call(app, "POST", `/admin/workspaces/${workspaceId}/members`, {
    token: testAdminToken,
    body: { email, role, ...(name === undefined ? {} : { name }) }
  })
  expect(invited.status, JSON.stringify(invited.body)).toBe(201)
  const accepted = await consoleCall(app, "POST", `/console/api/invitations/${tokenOf(invited.body.invitationUrl)}`, { body: { password } })
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(200)
  return { cookie: sessionCookieOf(accepted.headers), memberId: invited.body.id as string }
}

export const operatorCookie = async (app: RunningApp) => {
  const signedIn = await consoleCall(app, "POST", "/console/api/session", { body: { adminToken: testAdminToken } })
  expect(signedIn.status).toBe(200)
  return sessionCookieOf(signedIn.headers)
}
