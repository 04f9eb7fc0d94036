/* Every documented result code, produced through the C ABI the way its doc says, with its
 * detail. One function per code. PANIC and POISONED cannot be caused from C (no input makes
 * the library panic); the Rust unit test `a_panic_poisons_the_handle` covers them, and
 * ERROR is reserved (never returned by this version): here they only get their messages. */
#include <stdint.h>

#include "harness.h"

/* A length no object can have (above PTRDIFF_MAX). */
#define HUGE_LEN ((size_t)PTRDIFF_MAX + 1)

static void code_ok_and_done(void) {
    replystream_engine *engine = new_engine("generic", NULL);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "Hi.", 3, 0), REPLYSTREAM_OK);
    check_detail(engine, ""); /* a successful call leaves an empty detail */
    replystream_str s;
    CHECK_CODE(replystream_engine_last_error(engine, &s), REPLYSTREAM_OK);
    CHECK(s.len == 0 && s.ptr[0] == '\0');
    /* DONE: polling with nothing pending. A status, not an error. */
    const replystream_action *a = NULL;
    while (replystream_engine_poll_action(engine, &a) == REPLYSTREAM_OK) {
    }
    CHECK_CODE(replystream_engine_poll_action(engine, &a), REPLYSTREAM_DONE);
    CHECK(a != NULL && a->kind == REPLYSTREAM_ACTION_NONE);
    CHECK(!replystream_result_is_error(REPLYSTREAM_OK));
    CHECK(!replystream_result_is_error(REPLYSTREAM_DONE));
    CHECK(replystream_result_is_error(REPLYSTREAM_NULL_POINTER));
    CHECK(replystream_result_is_error(999));
    CHECK(strstr(replystream_result_str(REPLYSTREAM_DONE), "not an error") != NULL);
    replystream_engine_free(engine);
}

static void code_null_pointer(void) {
    const replystream_action *a = NULL;
    replystream_str s;
    replystream_stats stats;
    replystream_blocks *blocks = NULL;
    replystream_engine *none = NULL;
    /* NULL handles, for every family of functions. */
    CHECK_CODE(replystream_engine_push_message_start(NULL, 0), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_engine_push_text_delta(NULL, "x", 1, 0), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_engine_push_media(NULL, NULL, 0, NULL, 0, 0), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_engine_push_delivered(NULL, 1, NULL, 0, 0), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_engine_set_seq(NULL, 1), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_engine_poll_action(NULL, &a), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_action_media(NULL, 0, &s), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_engine_last_error(NULL, &s), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_engine_stats(NULL, &stats, sizeof stats), REPLYSTREAM_NULL_POINTER);
    replystream_outcome *outcome = (replystream_outcome *)&outcome;
    CHECK_CODE(replystream_engine_outcome(NULL, &outcome), REPLYSTREAM_NULL_POINTER);
    CHECK(outcome == NULL);
    CHECK_CODE(replystream_options_set_text_limit(NULL, 100), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_options_last_error(NULL, &s), REPLYSTREAM_NULL_POINTER);
    uint64_t deadline = 0;
    CHECK(!replystream_engine_next_deadline(NULL, &deadline));
    CHECK(deadline == REPLYSTREAM_NONE);
    CHECK(!replystream_engine_is_done(NULL));
    CHECK(replystream_blocks_count(NULL) == 0);
    CHECK(replystream_blocks_get(NULL, 0) == NULL);
    replystream_engine_free(NULL);
    replystream_options_free(NULL);
    replystream_blocks_free(NULL);
    replystream_outcome_free(NULL);

    /* NULL out-pointers. */
    CHECK_CODE(replystream_engine_new("slack", 5, NULL, 0, NULL), REPLYSTREAM_NULL_POINTER);
    check_new_error("out is NULL");
    CHECK_CODE(replystream_options_new(NULL), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_new_error(NULL), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_split(NULL, 0, NULL, "x", 1, NULL), REPLYSTREAM_NULL_POINTER);
    replystream_engine *engine = new_engine("telegram", NULL);
    CHECK_CODE(replystream_engine_poll_action(engine, NULL), REPLYSTREAM_NULL_POINTER);
    check_detail(engine, "out is NULL");
    CHECK_CODE(replystream_engine_last_error(engine, NULL), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_action_media(engine, 0, NULL), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_engine_stats(engine, NULL, sizeof stats), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_engine_outcome(engine, NULL), REPLYSTREAM_NULL_POINTER);

    /* A NULL text with a non-zero length; NULL with length 0 is the empty text. */
    CHECK_CODE(replystream_engine_new(NULL, 3, NULL, 0, &none), REPLYSTREAM_NULL_POINTER);
    CHECK(none == NULL);
    check_new_error("channel is NULL");
    CHECK_CODE(replystream_engine_push_text_delta(engine, NULL, 5, 0), REPLYSTREAM_NULL_POINTER);
    check_detail(engine, "NULL");
    CHECK_CODE(replystream_engine_push_text_delta(engine, NULL, 0, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_fail(engine, NULL, 1, 0), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_engine_push_tool_result(engine, "t", 1, NULL, 3, 0),
               REPLYSTREAM_NULL_POINTER);
    check_detail(engine, "media is NULL");
    const replystream_str media[] = {{NULL, 4}};
    CHECK_CODE(replystream_engine_push_final_reply(engine, NULL, 0, media, 1, 0),
               REPLYSTREAM_NULL_POINTER);
    check_detail(engine, "media[0]");
    CHECK_CODE(replystream_split(NULL, 0, NULL, NULL, 2, &blocks), REPLYSTREAM_NULL_POINTER);
    CHECK(blocks == NULL);
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_model(opts, NULL, 2), REPLYSTREAM_NULL_POINTER);
    CHECK_CODE(replystream_options_set_model(opts, NULL, 0), REPLYSTREAM_OK); /* none */
    replystream_options_free(opts);
    replystream_engine_free(engine);
}

static void code_invalid_utf8(void) {
    static const char bad[][4] = {
        {(char)0xff, 0, 0, 0},                   /* never valid */
        {(char)0xed, (char)0xa0, (char)0x80, 0}, /* a UTF-16 surrogate */
        {(char)0xc3, 'A', 0, 0},                 /* a lead byte not continued */
    };
    static const size_t bad_len[] = {1, 3, 2};
    replystream_engine *engine = new_engine("discord", NULL);
    for (size_t i = 0; i < sizeof bad_len / sizeof bad_len[0]; i++) {
        const replystream_str media[] = {{bad[i], bad_len[i]}};
        CHECK_CODE(replystream_engine_push_text_delta(engine, bad[i], bad_len[i], 0),
                   REPLYSTREAM_INVALID_UTF8);
        check_detail(engine, "UTF-8");
        CHECK_CODE(replystream_engine_push_thinking_delta(engine, bad[i], bad_len[i], 0),
                   REPLYSTREAM_INVALID_UTF8);
        CHECK_CODE(replystream_engine_push_text_snapshot(engine, bad[i], bad_len[i], 0),
                   REPLYSTREAM_INVALID_UTF8);
        CHECK_CODE(replystream_engine_push_text_end(engine, bad[i], bad_len[i], 0),
                   REPLYSTREAM_INVALID_UTF8);
        CHECK_CODE(replystream_engine_push_message_end(engine, bad[i], bad_len[i], 0),
                   REPLYSTREAM_INVALID_UTF8);
        CHECK_CODE(replystream_engine_push_tool_start(engine, bad[i], bad_len[i], 0),
                   REPLYSTREAM_INVALID_UTF8);
        CHECK_CODE(replystream_engine_push_tool_result(engine, "ok", 2, media, 1, 0),
                   REPLYSTREAM_INVALID_UTF8);
        check_detail(engine, "media[0]");
        CHECK_CODE(replystream_engine_push_tool_result(engine, bad[i], bad_len[i], NULL, 0, 0),
                   REPLYSTREAM_INVALID_UTF8);
        CHECK_CODE(replystream_engine_push_media(engine, NULL, 0, media, 1, 0),
                   REPLYSTREAM_INVALID_UTF8);
        CHECK_CODE(replystream_engine_push_final_reply(engine, NULL, 0, media, 1, 0),
                   REPLYSTREAM_INVALID_UTF8);
        CHECK_CODE(replystream_engine_push_delivered(engine, 1, bad[i], bad_len[i], 0),
                   REPLYSTREAM_INVALID_UTF8);
        CHECK_CODE(replystream_engine_push_fail(engine, bad[i], bad_len[i], 0),
                   REPLYSTREAM_INVALID_UTF8);
    }
    /* Nothing was pushed: the engine is still usable, its counters untouched. */
    replystream_stats stats;
    CHECK_CODE(replystream_engine_stats(engine, &stats, sizeof stats), REPLYSTREAM_OK);
    CHECK(stats.sends == 0 && stats.unknown_acks == 0);
    drive_log log;
    memset(&log, 0, sizeof log);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "fine", 4, 10), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_finish(engine, 10), REPLYSTREAM_OK);
    run_until_idle(engine, &log);
    CHECK(strcmp(log.text, "fine\n") == 0);
    replystream_engine_free(engine);

    /* Constructors, setters and the text core check their texts too. */
    replystream_engine *none = (replystream_engine *)&log; /* must be overwritten with NULL */
    CHECK_CODE(replystream_engine_new(bad[0], 1, NULL, 0, &none), REPLYSTREAM_INVALID_UTF8);
    CHECK(none == NULL);
    check_new_error("channel is not valid UTF-8");
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_response_prefix(opts, bad[1], 3), REPLYSTREAM_INVALID_UTF8);
    replystream_str s;
    CHECK_CODE(replystream_options_last_error(opts, &s), REPLYSTREAM_OK);
    CHECK(strstr(s.ptr, "response_prefix") != NULL);
    replystream_options_free(opts);
    replystream_blocks *blocks = NULL;
    CHECK_CODE(replystream_chunk(NULL, 0, NULL, bad[2], 2, &blocks), REPLYSTREAM_INVALID_UTF8);
    CHECK(blocks == NULL);
    check_new_error("text is not valid UTF-8");
}

static void code_unknown_channel(void) {
    replystream_engine *engine = (replystream_engine *)&engine;
    CHECK_CODE(replystream_engine_new("myspace", 7, NULL, 0, &engine),
               REPLYSTREAM_UNKNOWN_CHANNEL);
    CHECK(engine == NULL);
    check_new_error("myspace");
    check_new_error("telegram"); /* the detail lists the known names */
    replystream_blocks *blocks = NULL;
    CHECK_CODE(replystream_split("icq", 3, NULL, "x", 1, &blocks), REPLYSTREAM_UNKNOWN_CHANNEL);
    /* Names are case-insensitive; NULL and blank are the generic profile. */
    CHECK_CODE(replystream_engine_new("WhatsApp", 8, NULL, 0, &engine), REPLYSTREAM_OK);
    replystream_engine_free(engine);
    CHECK_CODE(replystream_engine_new("  ", 2, NULL, 0, &engine), REPLYSTREAM_OK);
    replystream_engine_free(engine);
    CHECK_CODE(replystream_engine_new(NULL, 0, NULL, 0, &engine), REPLYSTREAM_OK);
    check_new_error(""); /* a success clears the detail */
    replystream_str s;
    CHECK_CODE(replystream_new_error(&s), REPLYSTREAM_OK);
    CHECK(s.len == 0);
    replystream_engine_free(engine);
}

/* engine_new with one knob set must fail with INVALID_CONFIG naming `field`. */
static void refused(replystream_options *opts, const char *field) {
    replystream_engine *engine = NULL;
    CHECK_CODE(replystream_engine_new("slack", 5, opts, 0, &engine), REPLYSTREAM_INVALID_CONFIG);
    CHECK(engine == NULL);
    check_new_error(field);
    replystream_blocks *blocks = NULL;
    CHECK_CODE(replystream_split("slack", 5, opts, "x", 1, &blocks), REPLYSTREAM_INVALID_CONFIG);
    CHECK(blocks == NULL);
    replystream_options_free(opts);
}

static void code_invalid_config(void) {
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_text_limit(opts, 3), REPLYSTREAM_OK); /* checked on use */
    refused(opts, "text_limit");
    /* One below the smallest limit of the channel's metric (Slack counts chars). */
    opts = new_options();
    CHECK_CODE(replystream_options_set_text_limit(opts,
                                                  replystream_min_limit(REPLYSTREAM_METRIC_CHARS) - 1),
               REPLYSTREAM_OK);
    refused(opts, "text_limit");
    opts = new_options();
    CHECK_CODE(replystream_options_set_preview_limit(opts, 15), REPLYSTREAM_OK);
    refused(opts, "preview_limit");
    opts = new_options();
    CHECK_CODE(replystream_options_set_max_lines(opts, 2), REPLYSTREAM_OK);
    refused(opts, "max_lines");
    opts = new_options();
    CHECK_CODE(replystream_options_set_human_delay(opts, REPLYSTREAM_HUMAN_DELAY_CUSTOM, 10, 600000),
               REPLYSTREAM_OK);
    refused(opts, "human_delay");
    opts = new_options();
    CHECK_CODE(replystream_options_set_silent_token(opts, " ", 1), REPLYSTREAM_OK);
    refused(opts, "silent_token");
    opts = new_options();
    CHECK_CODE(replystream_options_set_heartbeat_token(opts, "", 0), REPLYSTREAM_OK);
    refused(opts, "heartbeat_token");
    opts = new_options();
    CHECK_CODE(replystream_options_set_text_limit(opts, 40), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_response_prefix(opts, "[a very long prefix]", 20),
               REPLYSTREAM_OK);
    refused(opts, "response_prefix");

    /* Setters refuse numbers that are not one of their constants, at once. */
    opts = new_options();
    replystream_str s;
    CHECK_CODE(replystream_options_set_metric(opts, 4), REPLYSTREAM_INVALID_CONFIG);
    CHECK_CODE(replystream_options_last_error(opts, &s), REPLYSTREAM_OK);
    CHECK(strstr(s.ptr, "metric") != NULL);
    CHECK_CODE(replystream_options_set_human_delay(opts, 99, 0, 0), REPLYSTREAM_INVALID_CONFIG);
    CHECK_CODE(replystream_options_set_break_mode(opts, 2), REPLYSTREAM_INVALID_CONFIG);
    CHECK_CODE(replystream_options_set_reasoning(opts, 3), REPLYSTREAM_INVALID_CONFIG);
    CHECK_CODE(replystream_options_set_preview(opts, 7), REPLYSTREAM_INVALID_CONFIG);
    CHECK_CODE(replystream_options_set_chunk_mode(opts, 2), REPLYSTREAM_INVALID_CONFIG);
    CHECK_CODE(replystream_options_set_break_preference(opts, 3), REPLYSTREAM_INVALID_CONFIG);
    /* A refused setter stored nothing: the options still make an engine. */
    replystream_engine *engine = new_engine("slack", opts);
    replystream_engine_free(engine);
    replystream_options_free(opts);
}

static void code_unknown_send(void) {
    replystream_engine *engine = new_engine("generic", NULL);
    CHECK_CODE(replystream_engine_push_delivered(engine, 12345, "ref", 3, 0),
               REPLYSTREAM_UNKNOWN_SEND);
    check_detail(engine, "12345");
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
    CHECK(strcmp(log.text, "Short answer.\n") == 0);
    /* Acking a send twice: the second ack is unknown. */
    CHECK_CODE(replystream_engine_push_delivered(engine, 1, NULL, 0, log.now_ms),
               REPLYSTREAM_UNKNOWN_SEND);
    replystream_stats stats;
    CHECK_CODE(replystream_engine_stats(engine, &stats, sizeof stats), REPLYSTREAM_OK);
    CHECK(stats.unknown_acks == 4);
    replystream_engine_free(engine);
}

static void code_turn_ended(void) {
    replystream_engine *engine = new_engine("generic", NULL);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "Bye.", 4, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_finish(engine, 0), REPLYSTREAM_OK);
    /* Finishing: model events are refused at once, acks and timers still work. */
    CHECK_CODE(replystream_engine_push_text_delta(engine, "more", 4, 1), REPLYSTREAM_TURN_ENDED);
    check_detail(engine, "text_delta after the turn ended");
    CHECK_CODE(replystream_engine_push_message_start(engine, 1), REPLYSTREAM_TURN_ENDED);
    CHECK_CODE(replystream_engine_push_finish(engine, 1), REPLYSTREAM_TURN_ENDED);
    const replystream_str media[] = {{"a.png", 5}};
    CHECK_CODE(replystream_engine_push_media(engine, NULL, 0, media, 1, 1), REPLYSTREAM_TURN_ENDED);
    CHECK_CODE(replystream_engine_push_timer(engine, 1), REPLYSTREAM_OK);
    replystream_engine_free(engine);
}

static void code_out_of_range(void) {
    replystream_engine *engine = new_engine("generic", NULL);
    replystream_str s = {"x", 1};
    /* No SEND polled yet: no media (and an empty view). */
    CHECK_CODE(replystream_action_media(engine, 0, &s), REPLYSTREAM_OUT_OF_RANGE);
    CHECK(s.len == 0 && s.ptr != NULL);
    const replystream_str media[] = {{"https://x.test/a.png", 20}, {"/tmp/b.ogg", 10}};
    CHECK_CODE(replystream_engine_push_media(engine, "caption", 7, media, 2, 0), REPLYSTREAM_OK);
    const replystream_action *a = NULL;
    int seen = 0;
    while (replystream_engine_poll_action(engine, &a) == REPLYSTREAM_OK) {
        if (a->kind != REPLYSTREAM_ACTION_SEND) {
            continue;
        }
        seen = 1;
        CHECK(a->media_count == 2);
        CHECK_CODE(replystream_action_media(engine, 1, &s), REPLYSTREAM_OK);
        CHECK(s.len == 10 && memcmp(s.ptr, "/tmp/b.ogg", 10) == 0);
        CHECK_CODE(replystream_action_media(engine, 2, &s), REPLYSTREAM_OUT_OF_RANGE);
        CHECK_CODE(replystream_action_media(engine, SIZE_MAX, &s), REPLYSTREAM_OUT_OF_RANGE);
    }
    CHECK(seen);
    /* A getter on a const handle leaves the last error alone. */
    CHECK_CODE(replystream_engine_push_delivered(engine, 4242, NULL, 0, 0),
               REPLYSTREAM_UNKNOWN_SEND);
    CHECK_CODE(replystream_action_media(engine, 9, &s), REPLYSTREAM_OUT_OF_RANGE);
    (void)deadline_of(engine);
    (void)replystream_engine_is_done(engine);
    replystream_stats stats;
    CHECK_CODE(replystream_engine_stats(engine, &stats, sizeof stats), REPLYSTREAM_OK);
    replystream_outcome *outcome = NULL;
    CHECK_CODE(replystream_engine_outcome(engine, &outcome), REPLYSTREAM_OK);
    CHECK(outcome == NULL); /* the turn has not ended */
    check_detail(engine, "4242");
    replystream_engine_free(engine);
}

static void code_invalid_argument(void) {
    replystream_engine *engine = new_engine("generic", NULL);
    replystream_engine *none = NULL;
    CHECK_CODE(replystream_engine_push_text_delta(engine, "x", HUGE_LEN, 0),
               REPLYSTREAM_INVALID_ARGUMENT);
    check_detail(engine, "larger than any object");
    CHECK_CODE(replystream_engine_push_text_snapshot(engine, "x", HUGE_LEN, 0),
               REPLYSTREAM_INVALID_ARGUMENT);
    CHECK_CODE(replystream_engine_new("x", HUGE_LEN, NULL, 0, &none), REPLYSTREAM_INVALID_ARGUMENT);
    /* Media: none at all, an empty URL, a count no array can have. */
    CHECK_CODE(replystream_engine_push_media(engine, NULL, 0, NULL, 0, 0),
               REPLYSTREAM_INVALID_ARGUMENT);
    check_detail(engine, "at least one URL");
    CHECK_CODE(replystream_engine_push_media(engine, "caption", 7, NULL, 0, 0),
               REPLYSTREAM_INVALID_ARGUMENT);
    const replystream_str media[] = {{"a.png", 5}, {"", 0}};
    CHECK_CODE(replystream_engine_push_media(engine, NULL, 0, media, 2, 0),
               REPLYSTREAM_INVALID_ARGUMENT);
    check_detail(engine, "media[1] is empty");
    CHECK_CODE(replystream_engine_push_tool_result(engine, "t", 1, media, 2, 0),
               REPLYSTREAM_INVALID_ARGUMENT);
    CHECK_CODE(replystream_engine_push_final_reply(engine, "t", 1, media, SIZE_MAX, 0),
               REPLYSTREAM_INVALID_ARGUMENT);
    /* A tool result or final reply may have no media at all. */
    CHECK_CODE(replystream_engine_push_tool_result(engine, "Ran the tool.", 13, NULL, 0, 0),
               REPLYSTREAM_OK);
    replystream_engine_free(engine);
}

static void codes_without_a_c_trigger(void) {
    /* PANIC and POISONED: see the Rust unit test; ERROR is reserved. The numbers are fixed. */
    CHECK(REPLYSTREAM_PANIC == 10 && REPLYSTREAM_POISONED == 11 && REPLYSTREAM_ERROR == 12);
    CHECK(strstr(replystream_result_str(REPLYSTREAM_PANIC), "panic") != NULL);
    CHECK(strstr(replystream_result_str(REPLYSTREAM_POISONED), "poisoned") != NULL);
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
        CHECK(replystream_result_is_error(codes[i]) == (i >= 2));
    }
    CHECK(strcmp(replystream_result_str(REPLYSTREAM_OK), "ok") == 0);
    CHECK(strcmp(replystream_result_str(UINT32_MAX), unknown) == 0);
    CHECK(strcmp(replystream_result_str(13), unknown) == 0);
    /* The header and the library agree on the version. */
    CHECK(strcmp(replystream_version(), REPLYSTREAM_VERSION) == 0);
    char expect[32];
    snprintf(expect, sizeof expect, "%d.%d.%d", REPLYSTREAM_VERSION_MAJOR,
             REPLYSTREAM_VERSION_MINOR, REPLYSTREAM_VERSION_PATCH);
    CHECK(strcmp(replystream_version(), expect) == 0);
}

static void sequence_numbers(void) {
    replystream_engine *engine = new_engine("generic", NULL);
    CHECK_CODE(replystream_engine_push_message_start(engine, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_set_seq(engine, 1), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "One. ", 5, 0), REPLYSTREAM_OK);
    /* A repeated number: ignored (and counted), not an error. */
    CHECK_CODE(replystream_engine_set_seq(engine, 1), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "One. ", 5, 0), REPLYSTREAM_OK);
    /* A push refused for its arguments keeps the number for the next push. */
    CHECK_CODE(replystream_engine_set_seq(engine, 3), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "\xff", 1, 0), REPLYSTREAM_INVALID_UTF8);
    /* A gap: counted, processed. */
    CHECK_CODE(replystream_engine_push_text_delta(engine, "Three.", 6, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_finish(engine, 0), REPLYSTREAM_OK);
    drive_log log;
    memset(&log, 0, sizeof log);
    run_until_idle(engine, &log);
    CHECK(strcmp(log.text, "One. Three.\n") == 0);
    replystream_stats stats;
    CHECK_CODE(replystream_engine_stats(engine, &stats, sizeof stats), REPLYSTREAM_OK);
    CHECK(stats.duplicates_ignored == 1);
    CHECK(stats.gaps == 1);
    replystream_engine_free(engine);
}

int main(void) {
    code_ok_and_done();
    code_null_pointer();
    code_invalid_utf8();
    code_unknown_channel();
    code_invalid_config();
    code_unknown_send();
    code_turn_ended();
    code_out_of_range();
    code_invalid_argument();
    codes_without_a_c_trigger();
    result_messages();
    sequence_numbers();
    printf("errors: ok\n");
    return 0;
}
