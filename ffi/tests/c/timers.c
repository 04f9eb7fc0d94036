/* Timers through the C ABI on a synthetic clock: a failed send with retry_after is retried
 * at its deadline (never earlier), an unacknowledged send times out into an ABORT, a late
 * ack is still accepted, and ARM_TIMER deadlines match replystream_engine_next_deadline. */
#include "harness.h"

/* The text of the last SEND that poll_all saw: views die at the next poll (ASan checks
 * that), so the text is copied out. */
static char last_text[256];

/* Polls every pending action into `out` (at most `cap`); returns how many. The text views
 * in `out` are dead afterwards (the final poll invalidates them); see `last_text`. */
static size_t poll_all(replystream_engine *engine, replystream_action *out, size_t cap) {
    size_t n = 0;
    replystream_result r;
    const replystream_action *a = NULL;
    while ((r = replystream_engine_poll_action(engine, &a)) == REPLYSTREAM_OK) {
        CHECK(n < cap);
        if (a->kind == REPLYSTREAM_ACTION_SEND) {
            CHECK(a->text.len < sizeof last_text);
            memcpy(last_text, a->text.ptr, a->text.len);
            last_text[a->text.len] = '\0';
        }
        out[n++] = *a; /* a copy of the record: its views die at the next poll */
    }
    CHECK_CODE(r, REPLYSTREAM_DONE);
    return n;
}

/* The only SEND among `actions`, or NULL. */
static const replystream_action *only_send(const replystream_action *actions, size_t n) {
    const replystream_action *send = NULL;
    for (size_t i = 0; i < n; i++) {
        if (actions[i].kind == REPLYSTREAM_ACTION_SEND) {
            CHECK(send == NULL);
            send = &actions[i];
        }
    }
    return send;
}

/* The deadline of the last ARM_TIMER among `actions`: REPLYSTREAM_NONE if it cancels the
 * earlier request, 0 if there is no ARM_TIMER. */
static uint64_t last_armed(const replystream_action *actions, size_t n) {
    uint64_t deadline = 0;
    for (size_t i = 0; i < n; i++) {
        if (actions[i].kind == REPLYSTREAM_ACTION_ARM_TIMER) {
            deadline = actions[i].has_deadline ? actions[i].deadline_ms : REPLYSTREAM_NONE;
        }
    }
    return deadline;
}

/* An engine on `channel` with this delivery timeout. */
static replystream_engine *engine_with_timeout(const char *channel, uint64_t timeout_ms) {
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_delivery_timeout_ms(opts, timeout_ms), REPLYSTREAM_OK);
    replystream_engine *engine = new_engine(channel, opts);
    replystream_options_free(opts);
    return engine;
}

static void retry_after(void) {
    replystream_engine *engine = engine_with_timeout("discord", 2000);
    replystream_action acts[16];

    CHECK_CODE(replystream_engine_push_message_start(engine, 100), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "Ready when you are.", 19, 100),
               REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_finish(engine, 150), REPLYSTREAM_OK);
    size_t n = poll_all(engine, acts, 16);
    const replystream_action *send = only_send(acts, n);
    CHECK(send != NULL);
    uint64_t id = send->send_id;
    CHECK(last_armed(acts, n) == 150 + 2000); /* the delivery timeout */
    CHECK(deadline_of(engine) == 2150);

    /* A 429: retry no earlier than 500 ms from now. */
    CHECK_CODE(replystream_engine_push_delivery_failed(engine, id, 500, false, 200),
               REPLYSTREAM_OK);
    n = poll_all(engine, acts, 16);
    CHECK(only_send(acts, n) == NULL);
    CHECK(deadline_of(engine) == 700);
    CHECK(last_armed(acts, n) == 700);

    /* Early timers do nothing. */
    CHECK_CODE(replystream_engine_push_timer(engine, 699), REPLYSTREAM_OK);
    n = poll_all(engine, acts, 16);
    CHECK(only_send(acts, n) == NULL);

    /* At the deadline the send is retried. */
    CHECK_CODE(replystream_engine_push_timer(engine, 700), REPLYSTREAM_OK);
    n = poll_all(engine, acts, 16);
    send = only_send(acts, n);
    CHECK(send != NULL);
    CHECK(strcmp(last_text, "Ready when you are.") == 0);
    id = send->send_id;
    CHECK_CODE(replystream_engine_push_delivered(engine, id, "42", 2, 750), REPLYSTREAM_OK);
    n = poll_all(engine, acts, 16);
    CHECK(n >= 1);
    int idle = 0;
    for (size_t i = 0; i < n; i++) {
        idle += acts[i].kind == REPLYSTREAM_ACTION_IDLE;
    }
    CHECK(idle == 1);
    CHECK(replystream_engine_is_done(engine));
    replystream_stats stats;
    CHECK_CODE(replystream_engine_stats(engine, &stats, sizeof stats), REPLYSTREAM_OK);
    CHECK(stats.failures == 1 && stats.retries == 1 && stats.delivered == 1);
    CHECK(stats.sends == 2 && stats.timeouts == 0);
    CHECK_CODE(replystream_engine_stats(engine, NULL, sizeof stats), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_engine_stats(NULL, &stats, sizeof stats), REPLYSTREAM_NULL_POINTER);
    replystream_engine_free(engine);
}

static void delivery_timeout(void) {
    replystream_engine *engine = engine_with_timeout("slack", 1000);
    replystream_action acts[16];

    CHECK_CODE(replystream_engine_push_message_start(engine, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "Hello.", 6, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_finish(engine, 10), REPLYSTREAM_OK);
    size_t n = poll_all(engine, acts, 16);
    const replystream_action *send = only_send(acts, n);
    CHECK(send != NULL);
    uint64_t id = send->send_id;
    uint64_t deadline = deadline_of(engine);
    CHECK(deadline == 1010);

    /* No ack: at the deadline the engine gives up on the send (ABORT), and what was not
     * delivered goes out again as a final. */
    CHECK_CODE(replystream_engine_push_timer(engine, deadline), REPLYSTREAM_OK);
    n = poll_all(engine, acts, 16);
    unsigned aborts = 0;
    uint64_t final_id = 0;
    for (size_t i = 0; i < n; i++) {
        if (acts[i].kind == REPLYSTREAM_ACTION_ABORT) {
            CHECK(acts[i].abort_reason == REPLYSTREAM_ABORT_DELIVERY_TIMEOUT);
            aborts++;
        }
        if (acts[i].kind == REPLYSTREAM_ACTION_SEND) {
            CHECK(acts[i].send_kind == REPLYSTREAM_SEND_FINAL);
            CHECK(acts[i].send_id != id);
            final_id = acts[i].send_id;
        }
    }
    CHECK(aborts == 1);
    /* A late ack of the timed-out send is recorded, not refused. */
    CHECK_CODE(replystream_engine_push_delivered(engine, id, NULL, 0, 1500), REPLYSTREAM_OK);
    poll_all(engine, acts, 16);
    if (final_id != 0) {
        CHECK_CODE(replystream_engine_push_delivered(engine, final_id, NULL, 0, 1600),
                   REPLYSTREAM_OK);
        poll_all(engine, acts, 16);
    }
    CHECK(replystream_engine_is_done(engine));
    replystream_stats stats;
    CHECK_CODE(replystream_engine_stats(engine, &stats, sizeof stats), REPLYSTREAM_OK);
    CHECK(stats.timeouts == 1);
    replystream_engine_free(engine);
}

static void no_timeout_when_off(void) {
    replystream_engine *engine = engine_with_timeout("generic", 0); /* 0: no timeout */
    replystream_action acts[16];
    CHECK_CODE(replystream_engine_push_text_delta(engine, "Hi.", 3, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_finish(engine, 0), REPLYSTREAM_OK);
    size_t n = poll_all(engine, acts, 16);
    CHECK(only_send(acts, n) != NULL);
    CHECK(deadline_of(engine) == REPLYSTREAM_NONE);
    replystream_engine_free(engine);
}

int main(void) {
    retry_after();
    delivery_timeout();
    no_timeout_when_off();
    printf("timers: ok\n");
    return 0;
}
