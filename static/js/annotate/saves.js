// Ordered saves per error card. A key's target (span id, save URL, the card version it was typed against) is
// fixed when the key is pressed; the saves of one card go out one at a time, in key order, each naming the
// version it expects, so the server can refuse a save typed against a state that changed meanwhile.

import { post } from "../lib/http.js";
import { msSince } from "./telemetry.js";

export class Saves {
  /** `hooks.sent(job)`, `hooks.acked(job, html)`, `hooks.failed(job, problem)` keep the page in step. */
  constructor(hooks) {
    this.hooks = hooks;
    this.queues = new Map(); // span id -> {items: [], inflight: job|null, next: expected version of the next key}
    this.waiters = [];
  }

  queue(span) {
    if (!this.queues.has(span)) this.queues.set(span, { items: [], inflight: null, next: 0 });
    return this.queues.get(span);
  }

  /** Queue `field` = `value` for `card` (to `url`, else the card's save URL); resolves to {ok} once the save is
   *  acknowledged or has failed. An occurrence pick shares the card's queue: it bumps the same version. */
  enqueue(card, field, value, url) {
    const span = card.dataset.span;
    const q = this.queue(span);
    if (!q.inflight && q.items.length === 0) q.next = parseInt(card.dataset.version, 10) || 0;
    const job = {
      span, field, value, url: url || card.dataset.saveUrl, expected: q.next,
      number: card.dataset.number, style: card.dataset.style, ms: msSince(span),
    };
    q.next += 1; // the server bumps the version on every accepted save
    return new Promise((resolve) => {
      job.resolve = resolve;
      q.items.push(job);
      this.pump(span);
    });
  }

  pump(span) {
    const q = this.queue(span);
    if (q.inflight || q.items.length === 0) { this.checkIdle(); return; }
    const job = q.items.shift();
    q.inflight = job;
    this.hooks.sent(job);
    const fields = { field: job.field, value: job.value, version: String(job.expected), number: job.number || "",
                     style: job.style || "0", ms: job.ms || "" };
    post(job.url, fields).then(
      (answer) => {
        if (answer.status === 200) {
          q.inflight = null;
          this.hooks.acked(job, answer.text);
          job.resolve({ ok: true });
          this.pump(span);
          return;
        }
        const message = (answer.trigger["sj:problem"] && answer.trigger["sj:problem"].message)
          || answer.text.slice(0, 300) || "Not saved: the server answered " + answer.status + ".";
        this.fail(q, job, { status: answer.status, message, html: answer.status === 409 ? answer.text : null });
      },
      () => this.fail(q, job, { status: 0, message: "Not saved: the server cannot be reached. Retry when it is back." }),
    );
  }

  /** A failed save stops its card: the keys queued behind it were typed against a state that never came. */
  fail(q, job, problem) {
    q.inflight = null;
    const dropped = q.items.splice(0);
    this.hooks.failed(job, problem, dropped.length);
    job.resolve({ ok: false });
    dropped.forEach((d) => d.resolve({ ok: false, dropped: true }));
    this.checkIdle();
  }

  idle() {
    for (const q of this.queues.values()) if (q.inflight || q.items.length) return false;
    return true;
  }

  /** Resolves when no save is queued or on its way. */
  whenIdle() {
    if (this.idle()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  checkIdle() {
    if (!this.idle()) return;
    const waiting = this.waiters.splice(0);
    waiting.forEach((w) => w());
  }
}
