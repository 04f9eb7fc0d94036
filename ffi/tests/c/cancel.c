/* Cancel: an ABORT action (reason CANCELLED), then nothing more is sent; polling after the
 * abort gives DONE; model events are refused; the ack of the send in flight is still taken,
 * an ack of a send never made is UNKNOWN_SEND; a second cancel, and a cancel after IDLE,
 * emit nothing. */
#include "harness.h"

/* Polls everything; returns the number of actions of `kind`, and the last SEND's id. */
static unsigned poll_count(replystream_engine *engine, replystream_action_kind kind,
                           uint64_t *last_send) {
    unsigned n = 0;
    const replystream_action *a = NULL;
    replystream_result r;
    while ((r = replystream_engine_poll_action(engine, &a)) == REPLYSTREAM_OK) {
        if (a->kind == kind) {
            n++;
        }
        if (a->kind == REPLYSTREAM_ACTION_SEND && last_send != NULL) {
            *last_send = a->send_id;
        }
        if (a->kind == REPLYSTREAM_ACTION_ABORT) {
            CHECK(a->abort_reason == REPLYSTREAM_ABORT_CANCELLED);
        }
    }
    CHECK_CODE(r, REPLYSTREAM_DONE);
    CHECK(a->kind == REPLYSTREAM_ACTION_NONE);
    return n;
}

static void cancel_mid_stream(void) {
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_chunk_min(opts, 20), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_chunk_max(opts, 40), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_coalesce_min(opts, 20), REPLYSTREAM_OK); /* signal: 1500 */
    replystream_engine *engine = new_engine("signal", opts);
    replystream_options_free(opts);
    uint64_t now = 0;
    CHECK_CODE(replystream_engine_push_message_start(engine, now), REPLYSTREAM_OK);
    const char *text = "One sentence that is long enough to be a block. Another one follows "
                       "here, and then a third that is still being written when";
    CHECK_CODE(replystream_engine_push_text_delta(engine, text, strlen(text), now),
               REPLYSTREAM_OK);
    /* One send goes out (one in flight at a time); it is not acked before the cancel. */
    uint64_t in_flight = 0;
    unsigned sends = poll_count(engine, REPLYSTREAM_ACTION_SEND, &in_flight);
    for (int i = 0; i < 10 && sends == 0; i++) { /* the coalescer may wait for its timer */
        now = deadline_of(engine);
        CHECK(now != REPLYSTREAM_NONE);
        CHECK_CODE(replystream_engine_push_timer(engine, now), REPLYSTREAM_OK);
        sends = poll_count(engine, REPLYSTREAM_ACTION_SEND, &in_flight);
    }
    CHECK(sends == 1);
    CHECK(in_flight != 0);
    now += 100;
    CHECK_CODE(replystream_engine_push_cancel(engine, now), REPLYSTREAM_OK);
    CHECK(poll_count(engine, REPLYSTREAM_ACTION_ABORT, NULL) == 1);
    CHECK(replystream_engine_is_done(engine));

    /* Nothing more: model events are refused, timers and a second cancel do nothing. */
    CHECK_CODE(replystream_engine_push_text_delta(engine, "more", 4, now), REPLYSTREAM_TURN_ENDED);
    check_detail(engine, "after the turn ended");
    CHECK_CODE(replystream_engine_push_finish(engine, now), REPLYSTREAM_TURN_ENDED);
    CHECK_CODE(replystream_engine_push_timer(engine, now + 60000), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_cancel(engine, now + 60000), REPLYSTREAM_OK);
    CHECK(poll_count(engine, REPLYSTREAM_ACTION_ABORT, NULL) == 0);

    /* Acks: a send never made is unknown (and counted); the one in flight is taken once. */
    CHECK_CODE(replystream_engine_push_delivered(engine, in_flight + 1, NULL, 0, now),
               REPLYSTREAM_UNKNOWN_SEND);
    check_detail(engine, "unknown send");
    CHECK_CODE(replystream_engine_push_delivery_failed(engine, 999, 10, false, now),
               REPLYSTREAM_UNKNOWN_SEND);
    CHECK_CODE(replystream_engine_push_delivered(engine, in_flight, "m1", 2, now),
               REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_delivered(engine, in_flight, "m1", 2, now),
               REPLYSTREAM_UNKNOWN_SEND);
    CHECK(poll_count(engine, REPLYSTREAM_ACTION_SEND, NULL) == 0);
    replystream_stats stats;
    CHECK_CODE(replystream_engine_stats(engine, &stats, sizeof stats), REPLYSTREAM_OK);
    CHECK(stats.unknown_acks == 3);
    CHECK(stats.delivered == 1);
    replystream_engine_free(engine);
}

static void cancel_after_idle(void) {
    replystream_engine *engine = new_engine("generic", NULL);
    drive_log log;
    memset(&log, 0, sizeof log);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "Done already.", 13, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_finish(engine, 0), REPLYSTREAM_OK);
    run_until_idle(engine, &log);
    CHECK(log.idles == 1);
    CHECK(log.aborts == 0);
    /* The turn is over: a cancel has nothing to stop and says nothing. */
    CHECK_CODE(replystream_engine_push_cancel(engine, log.now_ms + 5), REPLYSTREAM_OK);
    CHECK(poll_count(engine, REPLYSTREAM_ACTION_ABORT, NULL) == 0);
    CHECK(replystream_engine_is_done(engine));
    replystream_engine_free(engine);
}

int main(void) {
    cancel_mid_stream();
    cancel_after_idle();
    printf("cancel: ok\n");
    return 0;
}
