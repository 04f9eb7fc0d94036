/* Misuse through the C ABI gets the documented codes, never a crash: NULL handles and
 * pointers, invalid UTF-8, unknown channels and options, unknown acks, free(NULL), and a
 * message for every result code (unknown numbers included). */
#include "harness.h"

static void null_arguments(void) {
    replystream_action a;
    replystream_str s;
    CHECK_CODE(replystream_engine_push_message_start(NULL, 0), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_engine_push_text_delta(NULL, "x", 1, 0), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_engine_push_finish(NULL, 0), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_engine_push_timer(NULL, 0), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_engine_push_delivered(NULL, 1, NULL, 0, 0),
               REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_engine_poll_action(NULL, &a), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_action_media(NULL, 0, &s), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_engine_last_error(NULL, &s), REPLYSTREAM_NULL_POINTER);
    CHECK(replystream_engine_next_deadline(NULL) == REPLYSTREAM_NONE);
    CHECK(!replystream_engine_is_done(NULL));
    replystream_engine_free(NULL);

    replystream_engine *engine = new_engine("telegram", NULL);
    /* A NULL text with a length is an error; NULL with length 0 is the empty text. */
    CHECK_CODE(replystream_engine_push_text_delta(engine, NULL, 5, 0), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_engine_last_error(engine, &s), REPLYSTREAM_OK);
    CHECK(s.len > 0 && strstr(s.ptr, "NULL") != NULL);
    CHECK_CODE(replystream_engine_push_text_delta(engine, NULL, 0, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_last_error(engine, &s), REPLYSTREAM_OK);
    CHECK(s.len == 0 && s.ptr != NULL && s.ptr[0] == '\0');
    CHECK_CODE(replystream_engine_push_tool_result(engine, "t", 1, NULL, 3, 0),
               REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_engine_push_media(engine, NULL, 0, 0), REPLYSTREAM_INVALID_ARGUMENT);
    CHECK_CODE(replystream_engine_poll_action(engine, NULL), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_engine_last_error(engine, NULL), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_action_media(engine, 0, NULL), REPLYSTREAM_NULL_POINTER);
    /* No SEND polled yet: no media. */
    CHECK_CODE(replystream_action_media(engine, 0, &s), REPLYSTREAM_OUT_OF_RANGE);
    replystream_engine_free(engine);
}

static void invalid_utf8(void) {
    static const char bad[][4] = {
        {(char)0xff, 0, 0, 0},          /* never valid */
        {'a', (char)0xc3, 0, 0},        /* truncated 2-byte sequence */
        {(char)0xed, (char)0xa0, (char)0x80, 0}, /* a UTF-16 surrogate */
    };
    static const size_t bad_len[] = {1, 2, 3};
    replystream_engine *engine = new_engine("discord", NULL);
    for (size_t i = 0; i < sizeof bad_len / sizeof bad_len[0]; i++) {
        CHECK_CODE(replystream_engine_push_text_delta(engine, bad[i], bad_len[i], 0),
                   REPLYSTREAM_INVALID_UTF8);
        CHECK_CODE(replystream_engine_push_text_snapshot(engine, bad[i], bad_len[i], 0),
                   REPLYSTREAM_INVALID_UTF8);
        CHECK_CODE(replystream_engine_push_text_end(engine, bad[i], bad_len[i], 0),
                   REPLYSTREAM_INVALID_UTF8);
        CHECK_CODE(replystream_engine_push_thinking_delta(engine, bad[i], bad_len[i], 0),
                   REPLYSTREAM_INVALID_UTF8);
        CHECK_CODE(replystream_engine_push_tool_start(engine, bad[i], bad_len[i], 0),
                   REPLYSTREAM_INVALID_UTF8);
        CHECK_CODE(replystream_engine_push_tool_result(engine, "ok", 2, bad[i], bad_len[i], 0),
                   REPLYSTREAM_INVALID_UTF8);
        CHECK_CODE(replystream_engine_push_media(engine, bad[i], bad_len[i], 0),
                   REPLYSTREAM_INVALID_UTF8);
        CHECK_CODE(replystream_engine_push_delivered(engine, 1, bad[i], bad_len[i], 0),
                   REPLYSTREAM_INVALID_UTF8);
        CHECK_CODE(replystream_engine_push_fail(engine, bad[i], bad_len[i], 0),
                   REPLYSTREAM_INVALID_UTF8);
    }
    replystream_str s;
    CHECK_CODE(replystream_engine_last_error(engine, &s), REPLYSTREAM_OK);
    CHECK(strstr(s.ptr, "UTF-8") != NULL);
    /* Nothing was pushed: the engine is still usable and silent. */
    replystream_action a;
    CHECK_CODE(replystream_engine_push_text_delta(engine, "fine", 4, 10), REPLYSTREAM_OK);
    while (replystream_engine_poll_action(engine, &a) == REPLYSTREAM_OK) {
        CHECK(a.kind != REPLYSTREAM_ACTION_SEND || a.text.len > 0);
    }
    replystream_engine_free(engine);

    /* A channel name that is not UTF-8. */
    replystream_engine *none = (replystream_engine *)&s; /* must be overwritten with NULL */
    CHECK_CODE(replystream_engine_new(bad[0], 1, NULL, 0, &none), REPLYSTREAM_INVALID_UTF8);
    CHECK(none == NULL);
}

static void bad_configuration(void) {
    replystream_engine *engine = NULL;
    replystream_str detail;
    CHECK_CODE(replystream_engine_new("myspace", 7, NULL, 0, &engine),
               REPLYSTREAM_UNKNOWN_CHANNEL);
    CHECK(engine == NULL);
    CHECK_CODE(replystream_new_error(&detail), REPLYSTREAM_OK);
    CHECK(strstr(detail.ptr, "myspace") != NULL);
    CHECK_CODE(replystream_engine_new("slack", 5, NULL, 0, NULL), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_engine_new(NULL, 3, NULL, 0, &engine), REPLYSTREAM_NULL_POINTER);

    replystream_options opts = replystream_options_default();
    opts.text_limit = 3; /* below the minimum */
    CHECK_CODE(replystream_engine_new("slack", 5, &opts, 0, &engine), REPLYSTREAM_INVALID_CONFIG);
    CHECK(engine == NULL);
    CHECK_CODE(replystream_new_error(&detail), REPLYSTREAM_OK);
    CHECK(detail.len > 0);

    opts = replystream_options_default();
    opts.human_delay = 99; /* not a replystream_human_delay */
    CHECK_CODE(replystream_engine_new("slack", 5, &opts, 0, &engine), REPLYSTREAM_INVALID_CONFIG);
    opts = replystream_options_default();
    opts.human_delay = REPLYSTREAM_HUMAN_DELAY_CUSTOM;
    opts.human_delay_min_ms = 10;
    opts.human_delay_max_ms = 600000; /* above the one-minute cap */
    CHECK_CODE(replystream_engine_new("slack", 5, &opts, 0, &engine), REPLYSTREAM_INVALID_CONFIG);

    /* Every field set to something valid; names are case-insensitive; NULL is generic. */
    opts = replystream_options_default();
    opts.text_limit = 1000;
    opts.chunk_min = 100;
    opts.chunk_max = 400;
    opts.coalesce_idle_ms = REPLYSTREAM_NONE;
    opts.delivery_timeout_ms = 5000;
    opts.human_delay = REPLYSTREAM_HUMAN_DELAY_NATURAL;
    opts.break_mode = REPLYSTREAM_BREAK_MESSAGE_END;
    opts.reasoning = REPLYSTREAM_REASONING_STREAM;
    opts.block_streaming = REPLYSTREAM_TOGGLE_OFF;
    CHECK_CODE(replystream_engine_new("WhatsApp", 8, &opts, 0, &engine), REPLYSTREAM_OK);
    replystream_engine_free(engine);
    CHECK_CODE(replystream_engine_new(NULL, 0, NULL, 0, &engine), REPLYSTREAM_OK);
    CHECK_CODE(replystream_new_error(&detail), REPLYSTREAM_OK);
    CHECK(detail.len == 0);
    replystream_engine_free(engine);
}

static void unknown_send(void) {
    replystream_engine *engine = new_engine("generic", NULL);
    replystream_str s;
    CHECK_CODE(replystream_engine_push_delivered(engine, 12345, "ref", 3, 0),
               REPLYSTREAM_UNKNOWN_SEND);
    CHECK_CODE(replystream_engine_last_error(engine, &s), REPLYSTREAM_OK);
    CHECK(strstr(s.ptr, "12345") != NULL);
    CHECK_CODE(replystream_engine_push_delivery_failed(engine, 777, REPLYSTREAM_NONE, true, 0),
               REPLYSTREAM_UNKNOWN_SEND);
    CHECK_CODE(replystream_engine_push_delivery_failed(engine, 778, 1000, false, 0),
               REPLYSTREAM_UNKNOWN_SEND);
    /* The engine still works after the refused acks. */
    drive_log log;
    memset(&log, 0, sizeof log);
    CHECK_CODE(replystream_engine_push_message_start(engine, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "Short answer.", 13, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_finish(engine, 0), REPLYSTREAM_OK);
    run_until_idle(engine, &log);
    CHECK(log.idles == 1);
    CHECK(strstr(log.text, "Short answer.") != NULL);
    /* Acking a send twice: the second ack is unknown. */
    CHECK_CODE(replystream_engine_push_delivered(engine, 1, NULL, 0, log.now_ms),
               REPLYSTREAM_UNKNOWN_SEND);
    replystream_engine_free(engine);
}

static void sequence_numbers(void) {
    replystream_engine *engine = new_engine("generic", NULL);
    CHECK_CODE(replystream_engine_push_message_start(engine, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_set_seq(engine, 1), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "One. ", 5, 0), REPLYSTREAM_OK);
    /* A repeated number: ignored (and counted), not an error. */
    CHECK_CODE(replystream_engine_set_seq(engine, 1), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "One. ", 5, 0), REPLYSTREAM_OK);
    /* A gap: counted, processed. */
    CHECK_CODE(replystream_engine_set_seq(engine, 3), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "Three.", 6, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_finish(engine, 0), REPLYSTREAM_OK);
    drive_log log;
    memset(&log, 0, sizeof log);
    run_until_idle(engine, &log);
    CHECK(strcmp(log.text, "One. Three.\n") == 0);
    replystream_stats stats;
    CHECK_CODE(replystream_engine_stats(engine, &stats), REPLYSTREAM_OK);
    CHECK(stats.duplicates_ignored == 1);
    CHECK(stats.gaps == 1);
    replystream_engine_free(engine);
}

static void result_messages(void) {
    const replystream_result codes[] = {
        REPLYSTREAM_OK,           REPLYSTREAM_DONE,          REPLYSTREAM_NULL_POINTER,
        REPLYSTREAM_INVALID_UTF8, REPLYSTREAM_UNKNOWN_CHANNEL, REPLYSTREAM_INVALID_CONFIG,
        REPLYSTREAM_UNKNOWN_SEND, REPLYSTREAM_TURN_ENDED,    REPLYSTREAM_OUT_OF_RANGE,
        REPLYSTREAM_INVALID_ARGUMENT, REPLYSTREAM_PANIC,     REPLYSTREAM_POISONED,
        REPLYSTREAM_ERROR,
    };
    const char *unknown = replystream_result_str(1000);
    CHECK(unknown != NULL && strlen(unknown) > 0);
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        CHECK(codes[i] == i); /* the numbers are fixed: 0, 1, 2, ... */
        const char *msg = replystream_result_str(codes[i]);
        CHECK(msg != NULL && strlen(msg) > 0);
        CHECK(strcmp(msg, unknown) != 0);
        for (size_t j = 0; j < i; j++) {
            CHECK(strcmp(msg, replystream_result_str(codes[j])) != 0);
        }
    }
    CHECK(strcmp(replystream_result_str(REPLYSTREAM_OK), "ok") == 0);
    CHECK(strcmp(replystream_result_str(UINT32_MAX), unknown) == 0);
    CHECK(strcmp(replystream_result_str(13), unknown) == 0);
    const char *version = replystream_version();
    CHECK(version != NULL && strchr(version, '.') != NULL);
}

int main(void) {
    null_arguments();
    invalid_utf8();
    bad_configuration();
    unknown_send();
    sequence_numbers();
    result_messages();
    printf("errors: ok\n");
    return 0;
}
