/* Cancel: an ABORT action (reason CANCELLED), then nothing more is sent; polling after the
 * abort gives DONE; model events are refused; acks of the send in flight are still taken. */
#include "harness.h"

int main(void) {
    replystream_options opts = replystream_options_default();
    opts.chunk_min = 20;
    opts.chunk_max = 40;
    replystream_engine *engine = new_engine("signal", &opts);
    uint64_t now = 0;
    CHECK_CODE(replystream_engine_push_message_start(engine, now), REPLYSTREAM_OK);
    const char *text = "One sentence that is long enough to be a block. Another one follows "
                       "here, and then a third that is still being written when";
    CHECK_CODE(replystream_engine_push_text_delta(engine, text, strlen(text), now),
               REPLYSTREAM_OK);
    /* Read what is pending, without acking, then cancel. */
    replystream_action a;
    while (replystream_engine_poll_action(engine, &a) == REPLYSTREAM_OK) {
    }
    now += 100;
    CHECK_CODE(replystream_engine_push_cancel(engine, now), REPLYSTREAM_OK);

    unsigned aborts = 0, sends = 0;
    replystream_result r;
    while ((r = replystream_engine_poll_action(engine, &a)) == REPLYSTREAM_OK) {
        if (a.kind == REPLYSTREAM_ACTION_ABORT) {
            CHECK(a.abort_reason == REPLYSTREAM_ABORT_CANCELLED);
            aborts++;
        }
        if (a.kind == REPLYSTREAM_ACTION_SEND) {
            sends++;
        }
    }
    CHECK_CODE(r, REPLYSTREAM_DONE);
    CHECK(aborts == 1);
    CHECK(sends == 0);
    CHECK_CODE(replystream_engine_poll_action(engine, &a), REPLYSTREAM_DONE);
    CHECK(a.kind == REPLYSTREAM_ACTION_NONE);

    /* Nothing more: model events are refused, timers and a second cancel do nothing. */
    CHECK_CODE(replystream_engine_push_text_delta(engine, "more", 4, now), REPLYSTREAM_TURN_ENDED);
    CHECK_CODE(replystream_engine_push_finish(engine, now), REPLYSTREAM_TURN_ENDED);
    CHECK_CODE(replystream_engine_push_timer(engine, now + 60000), REPLYSTREAM_OK);
    replystream_engine_push_cancel(engine, now + 60000);
    while ((r = replystream_engine_poll_action(engine, &a)) == REPLYSTREAM_OK) {
        CHECK(a.kind != REPLYSTREAM_ACTION_SEND);
        CHECK(a.kind != REPLYSTREAM_ACTION_ABORT);
    }
    CHECK_CODE(r, REPLYSTREAM_DONE);
    replystream_engine_free(engine);
    printf("cancel: ok\n");
    return 0;
}
