// The small interface browser tools use to hand the browser to a person (the
// WAITING_HUMAN_BROWSER park, docs/pieces.md). The tool returns the ToolOutput built here; the movement ends with the
// park and the job waits, holding no worker slot, until `POST /api/jobs/:id/browser/resolved` (a
// login) or `POST /api/captcha-pool/resolve` (every job stopped at the same captcha screen).
import type { ToolServices, ToolOutput } from '../tools/tool.js';

export interface BrowserLoginWaitInput {
  /** The page that wants a login, shown to the person. */
  url?: string;
  /** What the person should do, e.g. "log in to the supplier portal". */
  message: string;
}

export interface CaptchaWaitInput {
  /**
   * The shared browser space whose captcha screen the job is stuck on. One person solving it there
   * frees every job waiting on it. Stored as jobs.captcha_space_id (not jobs.space_id, which a
   * personal workspace leaves empty).
   */
  spaceId: string;
  url?: string;
  message: string;
}

function describe(what: string, url: string | undefined, message: string): string {
  return `${what}${url ? ` at ${url}` : ''}: ${message}`.slice(0, 1000);
}

/** The job waits (browser_login) until a person says the login is done; this movement then runs again. */
export function browserLoginWait(input: BrowserLoginWaitInput): ToolOutput {
  const summary = describe('waiting for a person to log in', input.url, input.message);
  return {
    content: `${summary}. The job waits; this step starts again once they are done.`,
    park: { next: 'WAITING_HUMAN_BROWSER', waitReason: 'browser_login', summary },
  };
}

/**
 * The job waits (captcha) until the captcha screen of `spaceId` is solved. The space is recorded on
 * the job first, so the pool resolve finds it; the API clears it again when it wakes the job.
 */
export async function captchaWait(input: CaptchaWaitInput, services: ToolServices): Promise<ToolOutput> {
  const spaceId = input.spaceId.trim();
  if (!spaceId) throw new Error('captchaWait needs a spaceId');
  await services.setCaptchaSpace(spaceId);
  const summary = describe(`waiting for a person to solve a captcha in space ${spaceId}`, input.url, input.message);
  return {
    content: `${summary}. The job waits; this step starts again once it is solved.`,
    park: { next: 'WAITING_HUMAN_BROWSER', waitReason: 'captcha', summary },
  };
}
