/* How a turn ended, through the C ABI (replystream_engine_outcome): NULL while the turn runs;
 * finished with everything delivered; a final that fails for good, and a tool result with
 * media that does, listed with their text and media; a final that times out, listed until a
 * late ack arrives; failed and cancelled turns. The getter reads only: it leaves the last
 * error alone and works on a const handle. */
#include "harness.h"

/* What to do with each SEND of a drive. */
typedef enum { DELIVER, FAIL_FOREVER, HANG } fate;

typedef struct {
    uint64_t now_ms;
    unsigned idles;
    uint64_t hung_id; /* the last send left without an ack */
} drive;

/* Polls and answers every action: sends of `kind` get `special`, the others are delivered
 * 10 ms later. Then fires deadlines until IDLE or nothing is left to wait for. */
static void run(replystream_engine *engine, drive *d, replystream_send_kind kind, fate special) {
    for (int step = 0; step < 1000; step++) {
        const replystream_action *a = NULL;
        replystream_result r;
        while ((r = replystream_engine_poll_action(engine, &a)) == REPLYSTREAM_OK) {
            if (a->kind == REPLYSTREAM_ACTION_IDLE) {
                d->idles++;
            }
            if (a->kind != REPLYSTREAM_ACTION_SEND) {
                continue;
            }
            fate f = a->send_kind == kind ? special : DELIVER;
            d->now_ms += 10;
            if (f == DELIVER) {
                CHECK_CODE(replystream_engine_push_delivered(engine, a->send_id, NULL, 0, d->now_ms),
                           REPLYSTREAM_OK);
            } else if (f == FAIL_FOREVER) {
                CHECK_CODE(replystream_engine_push_delivery_failed(engine, a->send_id,
                                                                   REPLYSTREAM_NONE, true,
                                                                   d->now_ms),
                           REPLYSTREAM_OK);
            } else {
                d->hung_id = a->send_id;
            }
        }
        CHECK_CODE(r, REPLYSTREAM_DONE);
        if (d->idles > 0 || !fire_next_deadline(engine, &d->now_ms)) {
            return;
        }
    }
    CHECK(!"engine did not settle");
}

/* An engine that sends everything as finals at finish, with a 1 s delivery timeout. */
static replystream_engine *finals_only(void) {
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_block_streaming(opts, false), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_delivery_timeout_ms(opts, 1000), REPLYSTREAM_OK);
    replystream_engine *engine = new_engine("generic", opts);
    replystream_options_free(opts);
    return engine;
}

/* Takes the outcome, which must exist. */
static replystream_outcome *outcome_of(const replystream_engine *engine) {
    replystream_outcome *o = NULL;
    CHECK_CODE(replystream_engine_outcome(engine, &o), REPLYSTREAM_OK);
    CHECK(o != NULL);
    CHECK((o->undelivered == NULL) == (o->undelivered_count == 0));
    for (size_t i = 0; i < o->undelivered_count; i++) {
        const replystream_undelivered *u = &o->undelivered[i];
        check_view(u->text);
        CHECK((u->media == NULL) == (u->media_count == 0));
        for (size_t m = 0; m < u->media_count; m++) {
            check_view(u->media[m]);
        }
        CHECK(i == 0 || u->send_id > o->undelivered[i - 1].send_id); /* in send order */
    }
    return o;
}

static bool view_is(replystream_str s, const char *text) {
    return s.len == strlen(text) && memcmp(s.ptr, text, s.len) == 0;
}

static void none_while_running_then_all_delivered(void) {
    replystream_engine *engine = finals_only();
    replystream_outcome *o = (replystream_outcome *)&o; /* must be overwritten */
    CHECK_CODE(replystream_engine_outcome(engine, &o), REPLYSTREAM_OK);
    CHECK(o == NULL);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "All good.", 9, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_outcome(engine, &o), REPLYSTREAM_OK);
    CHECK(o == NULL);
    CHECK_CODE(replystream_engine_push_finish(engine, 0), REPLYSTREAM_OK);
    drive d = {0};
    run(engine, &d, REPLYSTREAM_SEND_FINAL, DELIVER);
    CHECK(d.idles == 1);
    o = outcome_of(engine);
    CHECK(o->ending == REPLYSTREAM_TURN_FINISHED);
    CHECK(o->all_delivered && o->final_delivered);
    CHECK(o->undelivered_count == 0);
    replystream_outcome_free(o);
    replystream_engine_free(engine);
}

static void a_final_that_fails_for_good(void) {
    replystream_engine *engine = finals_only();
    CHECK_CODE(replystream_engine_push_text_delta(engine, "The answer is 42.", 17, 0),
               REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_finish(engine, 0), REPLYSTREAM_OK);
    drive d = {0};
    run(engine, &d, REPLYSTREAM_SEND_FINAL, FAIL_FOREVER);
    CHECK(d.idles == 1);
    /* The getter leaves the last error alone. */
    CHECK_CODE(replystream_engine_push_delivered(engine, 9999, NULL, 0, d.now_ms),
               REPLYSTREAM_UNKNOWN_SEND);
    replystream_outcome *o = outcome_of(engine);
    check_detail(engine, "9999");
    CHECK(o->ending == REPLYSTREAM_TURN_FINISHED);
    CHECK(!o->all_delivered && !o->final_delivered);
    CHECK(o->undelivered_count == 1);
    const replystream_undelivered *u = &o->undelivered[0];
    CHECK(u->send_kind == REPLYSTREAM_SEND_FINAL);
    CHECK(u->reason == REPLYSTREAM_UNDELIVERED_FAILED);
    CHECK(view_is(u->text, "The answer is 42."));
    CHECK(u->media_count == 0 && !u->is_error && u->lane == REPLYSTREAM_LANE_ANSWER);
    /* Two outcomes are independent copies. */
    replystream_outcome *again = outcome_of(engine);
    CHECK(again != o && again->undelivered != o->undelivered);
    replystream_outcome_free(o);
    CHECK(view_is(again->undelivered[0].text, "The answer is 42."));
    replystream_outcome_free(again);
    replystream_engine_free(engine);
}

static void a_tool_result_with_media_that_fails(void) {
    replystream_engine *engine = finals_only();
    const replystream_str media[] = {{"https://example.com/chart.png", 29}, {"/tmp/b.ogg", 10}};
    CHECK_CODE(replystream_engine_push_tool_result(engine, "ran 3 tests", 11, media, 2, 0),
               REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "Done.", 5, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_finish(engine, 0), REPLYSTREAM_OK);
    drive d = {0};
    run(engine, &d, REPLYSTREAM_SEND_TOOL, FAIL_FOREVER);
    replystream_outcome *o = outcome_of(engine);
    CHECK(o->final_delivered && !o->all_delivered);
    CHECK(o->undelivered_count >= 1);
    /* The tool's text and both media are listed, across its sends. */
    bool text = false;
    unsigned urls = 0;
    for (size_t i = 0; i < o->undelivered_count; i++) {
        const replystream_undelivered *u = &o->undelivered[i];
        CHECK(u->send_kind == REPLYSTREAM_SEND_TOOL);
        CHECK(u->reason == REPLYSTREAM_UNDELIVERED_FAILED);
        text |= view_is(u->text, "ran 3 tests");
        for (size_t m = 0; m < u->media_count; m++) {
            urls += view_is(u->media[m], "https://example.com/chart.png") ||
                    view_is(u->media[m], "/tmp/b.ogg");
        }
    }
    CHECK(text && urls == 2);
    replystream_outcome_free(o);
    replystream_engine_free(engine);
}

static void a_final_that_times_out_until_a_late_ack(void) {
    replystream_engine *engine = finals_only();
    CHECK_CODE(replystream_engine_push_text_delta(engine, "Slow platform.", 14, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_finish(engine, 0), REPLYSTREAM_OK);
    drive d = {0};
    run(engine, &d, REPLYSTREAM_SEND_FINAL, HANG);
    CHECK(d.idles == 1 && d.hung_id != 0);
    replystream_outcome *o = outcome_of(engine);
    CHECK(o->undelivered_count == 1);
    CHECK(o->undelivered[0].reason == REPLYSTREAM_UNDELIVERED_TIMED_OUT);
    CHECK(o->undelivered[0].send_id == d.hung_id);
    CHECK(view_is(o->undelivered[0].text, "Slow platform."));
    replystream_outcome_free(o);
    /* The platform answers after all. */
    CHECK_CODE(replystream_engine_push_delivered(engine, d.hung_id, NULL, 0, d.now_ms + 5000),
               REPLYSTREAM_OK);
    o = outcome_of(engine);
    CHECK(o->all_delivered && o->final_delivered && o->undelivered_count == 0);
    replystream_outcome_free(o);
    replystream_engine_free(engine);
}

static void failed_and_cancelled_turns(void) {
    replystream_engine *engine = finals_only();
    CHECK_CODE(replystream_engine_push_text_delta(engine, "Partial answer", 14, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_fail(engine, "model overloaded", 16, 0), REPLYSTREAM_OK);
    drive d = {0};
    run(engine, &d, REPLYSTREAM_SEND_FINAL, DELIVER);
    replystream_outcome *o = outcome_of(engine);
    CHECK(o->ending == REPLYSTREAM_TURN_FAILED);
    CHECK(o->all_delivered);
    replystream_outcome_free(o);
    replystream_engine_free(engine);

    engine = finals_only();
    CHECK_CODE(replystream_engine_push_text_delta(engine, "Never sent", 10, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_cancel(engine, 0), REPLYSTREAM_OK);
    o = outcome_of(engine);
    CHECK(o->ending == REPLYSTREAM_TURN_CANCELLED);
    CHECK(!o->all_delivered);
    replystream_outcome_free(o);
    replystream_engine_free(engine);
}

static void bad_arguments(void) {
    replystream_outcome *o = (replystream_outcome *)&o;
    CHECK_CODE(replystream_engine_outcome(NULL, &o), REPLYSTREAM_NULL_POINTER);
    CHECK(o == NULL);
    replystream_engine *engine = finals_only();
    CHECK_CODE(replystream_engine_outcome(engine, NULL), REPLYSTREAM_NULL_POINTER);
    replystream_outcome_free(NULL);
    replystream_engine_free(engine);
}

int main(void) {
    none_while_running_then_all_delivered();
    a_final_that_fails_for_good();
    a_tool_result_with_media_that_fails();
    a_final_that_times_out_until_a_late_ack();
    failed_and_cancelled_turns();
    bad_arguments();
    printf("outcome: ok\n");
    return 0;
}
