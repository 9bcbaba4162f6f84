// Server-sent event framing as the providers write it.

/** A data-only event (`data: <json>`), as chat-completion and FIM streams use. */
export const dataEvent = (payload: unknown): string => `data: ${JSON.stringify(payload)}\n\n`

/** A named event (`event: <name>` + `data: <json>`), as messages streams use. */
export const namedEvent = (name: string, payload: unknown): string =>
  `event: ${name}\ndata: ${JSON.stringify(payload)}\n\n`

/** The terminator of data-only streams. */
export const doneEvent = "data: [DONE]\n\n"
