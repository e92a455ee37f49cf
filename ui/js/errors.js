// Errors of the app's commands as the page sees them.

/// A command's refusal: `code` from the core's typed error (`session_busy`,
/// `not_found`, `bad_input`, ...) for the page to branch on, `message` for the person.
export class AppError extends Error {
  constructor(e) {
    const o = e && typeof e === 'object' ? e : { code: 'unknown', message: String(e) };
    super(o.message || String(o.code));
    this.code = o.code || 'unknown';
  }

  toString() { return this.message; }
}
