/* Streamed text may split a character across pushes: the first bytes wait for the rest.
 * Invalid bytes stay INVALID_UTF8 (nothing pushed), and a stream that ends inside a
 * character is refused once (the kept bytes dropped), so pushing again goes through. */
#include "harness.h"

/* Pushes `text` to a fresh engine in pieces of `step` bytes (cutting characters anywhere),
 * finishes, and returns what was sent in `log`. */
static void stream_in_pieces(const char *text, size_t step, int thinking, drive_log *log) {
    replystream_options *opts = new_options();
    if (thinking) {
        CHECK_CODE(replystream_options_set_reasoning(opts, REPLYSTREAM_REASONING_ON),
                   REPLYSTREAM_OK);
    }
    replystream_engine *engine = new_engine("telegram", opts);
    replystream_options_free(opts);
    memset(log, 0, sizeof *log);
    size_t len = strlen(text);
    for (size_t at = 0; at < len; at += step) {
        size_t n = len - at < step ? len - at : step;
        replystream_result r =
            thinking ? replystream_engine_push_thinking_delta(engine, text + at, n, log->now_ms)
                     : replystream_engine_push_text_delta(engine, text + at, n, log->now_ms);
        CHECK_CODE(r, REPLYSTREAM_OK);
        drain(engine, log, 1);
    }
    if (thinking) {
        CHECK_CODE(replystream_engine_push_thinking_end(engine, log->now_ms), REPLYSTREAM_OK);
        CHECK_CODE(replystream_engine_push_text_delta(engine, "ok", 2, log->now_ms),
                   REPLYSTREAM_OK);
    }
    CHECK_CODE(replystream_engine_push_finish(engine, log->now_ms), REPLYSTREAM_OK);
    run_until_idle(engine, log);
    CHECK(log->idles == 1);
    replystream_engine_free(engine);
}

static void split_characters_arrive_whole(void) {
    /* 2-, 3- and 4-byte characters, a ZWJ sequence and a combining mark. */
    static const char text[] = "Caf\xc3\xa9 \xe2\x82\xac 5, \xf0\x9f\xa6\x80 crab, "
                               "\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x92\xbb dev, e\xcc\x81.";
    for (size_t step = 1; step <= 5; step++) {
        drive_log log;
        stream_in_pieces(text, step, 0, &log);
        char want[256];
        snprintf(want, sizeof want, "%s\n", text);
        if (strcmp(log.text, want) != 0) {
            fprintf(stderr, "step %zu: sent \"%s\"\n", step, log.text);
            exit(1);
        }
    }
    /* The reasoning stream has its own carry. */
    drive_log log;
    stream_in_pieces("R\xc3\xa9" "flexion \xe2\x9c\x93", 1, 1, &log);
    CHECK(strstr(log.text, "R\xc3\xa9" "flexion \xe2\x9c\x93") != NULL);
}

static void invalid_bytes_are_refused(void) {
    replystream_engine *engine = new_engine("generic", NULL);
    /* A lead byte kept, then a push that does not continue it: refused, the byte dropped. */
    CHECK_CODE(replystream_engine_push_text_delta(engine, "ab\xc3", 3, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "cd", 2, 0), REPLYSTREAM_INVALID_UTF8);
    check_detail(engine, "does not continue");
    CHECK_CODE(replystream_engine_push_text_delta(engine, "cd", 2, 0), REPLYSTREAM_OK);
    /* Invalid in the middle of a push: refused, the kept byte stays for the corrected push. */
    CHECK_CODE(replystream_engine_push_text_delta(engine, " \xc3", 2, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "\xa9\xff", 2, 0),
               REPLYSTREAM_INVALID_UTF8);
    check_detail(engine, "offset 1");
    CHECK_CODE(replystream_engine_push_text_delta(engine, "\xa9!", 2, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_finish(engine, 0), REPLYSTREAM_OK);
    drive_log log;
    memset(&log, 0, sizeof log);
    run_until_idle(engine, &log);
    CHECK(strcmp(log.text, "abcd \xc3\xa9!\n") == 0);
    replystream_engine_free(engine);
}

static void a_stream_ending_inside_a_character(void) {
    /* Each of these ends the answer stream; with a byte kept it is refused once. */
    const char *names[] = {"text_end", "text_snapshot", "message_end", "message_start",
                           "tool_start", "finish"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        replystream_engine *engine = new_engine("generic", NULL);
        CHECK_CODE(replystream_engine_push_text_delta(engine, "Hi \xf0\x9f", 5, 0),
                   REPLYSTREAM_OK);
        /* Timers, acks and reasoning do not end the answer: the bytes stay kept. */
        CHECK_CODE(replystream_engine_push_timer(engine, 1), REPLYSTREAM_OK);
        CHECK_CODE(replystream_engine_push_thinking_end(engine, 1), REPLYSTREAM_OK);
        replystream_result r = REPLYSTREAM_ERROR;
        for (int attempt = 0; attempt < 2; attempt++) {
            switch (i) {
            case 0: r = replystream_engine_push_text_end(engine, NULL, 0, 2); break;
            case 1: r = replystream_engine_push_text_snapshot(engine, "Hi ", 3, 2); break;
            case 2: r = replystream_engine_push_message_end(engine, NULL, 0, 2); break;
            case 3: r = replystream_engine_push_message_start(engine, 2); break;
            case 4: r = replystream_engine_push_tool_start(engine, "t", 1, 2); break;
            default: r = replystream_engine_push_finish(engine, 2); break;
            }
            if (attempt == 0) {
                CHECK_CODE(r, REPLYSTREAM_INVALID_UTF8);
                check_detail(engine, "never completed");
                check_detail(engine, names[i]);
            } else {
                CHECK_CODE(r, REPLYSTREAM_OK);
            }
        }
        replystream_engine_free(engine);
    }
    /* The reasoning stream: thinking_end is refused once. */
    replystream_engine *engine = new_engine("generic", NULL);
    CHECK_CODE(replystream_engine_push_thinking_delta(engine, "\xe2\x82", 2, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_text_end(engine, NULL, 0, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_thinking_end(engine, 0), REPLYSTREAM_INVALID_UTF8);
    CHECK_CODE(replystream_engine_push_thinking_end(engine, 0), REPLYSTREAM_OK);
    replystream_engine_free(engine);
    /* Fail and cancel: the stream broke off, the kept bytes are dropped without an error. */
    engine = new_engine("generic", NULL);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "cut \xc3", 5, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_fail(engine, "model error", 11, 0), REPLYSTREAM_OK);
    drive_log log;
    memset(&log, 0, sizeof log);
    run_until_idle(engine, &log);
    CHECK(strstr(log.text, "cut") != NULL && strstr(log.text, "model error") != NULL);
    replystream_engine_free(engine);
    engine = new_engine("generic", NULL);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "\xc3", 1, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_cancel(engine, 0), REPLYSTREAM_OK);
    replystream_engine_free(engine);
}

int main(void) {
    split_characters_arrive_whole();
    invalid_bytes_are_refused();
    a_stream_ending_inside_a_character();
    printf("utf8: ok\n");
    return 0;
}
