/** A request the page's API refuses: 400 with the message (which names the field at fault). */
export class BadRequest extends Error {}

/** A record or path that does not exist: 404 with the message. */
export class NotFound extends Error {}
