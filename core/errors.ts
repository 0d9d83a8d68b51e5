// The one marker of an error that retrying cannot help (a missing job, a refused request, no model
// configured). The activity boundary (activities/errors.ts) turns every such error into a
// non-retryable Temporal failure, so a new final error is declared final where it is defined, not
// added to a list there. Pure: the db, engine and activities all import it.
export abstract class NonRetryableError extends Error {}
