/* Options through the C ABI change what the engine does: each test sets a knob, runs a
 * short turn and checks what a chat would see. (That every setter reaches its knob is the
 * Rust test `every_setter_reaches_its_knob`; refused values are in errors.c.) */
#include "harness.h"

static const char REPLY[] =
    "First line of the answer.\nSecond line.\nThird line.\nFourth line.\n\n"
    "A second paragraph that is long enough to be worth its own block, with some more "
    "words so that it passes the small chunk minimum used here.";

/* Runs REPLY through an engine made with `opts` (freed here), acking everything. */
static void run(const char *channel, replystream_options *opts, const char *reply,
                drive_log *log) {
    replystream_engine *engine = new_engine(channel, opts);
    replystream_options_free(opts);
    memset(log, 0, sizeof *log);
    CHECK_CODE(replystream_engine_push_message_start(engine, 0), REPLYSTREAM_OK);
    size_t len = strlen(reply);
    for (size_t at = 0; at < len; at += 16) {
        size_t n = len - at < 16 ? len - at : 16;
        log->now_ms += 10;
        CHECK_CODE(replystream_engine_push_text_delta(engine, reply + at, n, log->now_ms),
                   REPLYSTREAM_OK);
        drain(engine, log, 2);
    }
    CHECK_CODE(replystream_engine_push_message_end(engine, NULL, 0, log->now_ms), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_finish(engine, log->now_ms), REPLYSTREAM_OK);
    run_until_idle(engine, log);
    CHECK(log->idles == 1);
    replystream_engine_free(engine);
}

static void response_prefix_with_model(void) {
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_response_prefix(opts, "[{model}]", 9), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_model(opts, "acme/large-2", 12), REPLYSTREAM_OK);
    drive_log log;
    run("generic", opts, REPLY, &log);
    CHECK(strncmp(log.text, "[large-2] First line", 20) == 0);
}

static void silent_token_can_be_disabled(void) {
    drive_log log;
    run("generic", new_options(), "NO_REPLY", &log);
    CHECK(log.sends == 0); /* the default silent token sends nothing */
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_silent_token(opts, NULL, 0), REPLYSTREAM_OK);
    run("generic", opts, "NO_REPLY", &log);
    CHECK(strcmp(log.text, "NO_REPLY\n") == 0);
}

static void block_streaming_off_sends_finals(void) {
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_chunk_min(opts, 20), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_chunk_max(opts, 60), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_block_streaming(opts, false), REPLYSTREAM_OK);
    drive_log log;
    run("generic", opts, REPLY, &log);
    CHECK(log.kinds[REPLYSTREAM_SEND_BLOCK] == 0);
    CHECK(log.kinds[REPLYSTREAM_SEND_FINAL] >= 1);
}

static void text_limit_and_max_lines(void) {
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_block_streaming(opts, false), REPLYSTREAM_OK);
    /* 49 bytes is the smallest limit in bytes (room for a code fence around an emoji). */
    CHECK_CODE(replystream_options_set_text_limit(opts, 49), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_metric(opts, REPLYSTREAM_METRIC_BYTES), REPLYSTREAM_OK);
    drive_log log;
    run("generic", opts, REPLY, &log);
    /* Every message fits 49 bytes, and nothing is lost. */
    CHECK(log.sends >= 4);
    CHECK(log.max_send_len <= 49);

    /* Discord caps lines at 17; a cap of 3 splits the four short lines. */
    opts = new_options();
    CHECK_CODE(replystream_options_set_block_streaming(opts, false), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_max_lines(opts, 3), REPLYSTREAM_OK);
    run("discord", opts, REPLY, &log);
    CHECK(log.max_send_lines <= 3);
    CHECK(log.kinds[REPLYSTREAM_SEND_FINAL] >= 2);
    /* 0 removes the cap: the first paragraph's four lines stay together. */
    opts = new_options();
    CHECK_CODE(replystream_options_set_block_streaming(opts, false), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_max_lines(opts, 0), REPLYSTREAM_OK);
    run("discord", opts, REPLY, &log);
    CHECK(log.max_send_lines >= 4);
}

static void human_delay_spaces_blocks(void) {
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_chunk_min(opts, 20), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_chunk_max(opts, 60), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_coalesce_min(opts, 1), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_coalesce_max(opts, 60), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_coalesce_idle_ms(opts, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_human_delay(opts, REPLYSTREAM_HUMAN_DELAY_CUSTOM, 5000, 5000),
               REPLYSTREAM_OK);
    drive_log log;
    run("generic", opts, REPLY, &log);
    CHECK(log.sends >= 3);
    /* At least one 5 s pause before each block after the first. */
    CHECK(log.now_ms >= 5000u * (log.kinds[REPLYSTREAM_SEND_BLOCK] - 1));
}

static void reasoning_stream_uses_its_lane(void) {
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_reasoning(opts, REPLYSTREAM_REASONING_ON), REPLYSTREAM_OK);
    replystream_engine *engine = new_engine("generic", opts);
    replystream_options_free(opts);
    CHECK_CODE(replystream_engine_push_thinking_delta(engine, "Let me think.", 13, 0),
               REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_thinking_end(engine, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "The answer.", 11, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_finish(engine, 0), REPLYSTREAM_OK);
    unsigned reasoning = 0, answer = 0;
    uint64_t now = 0;
    for (int step = 0; step < 100 && !replystream_engine_is_done(engine); step++) {
        const replystream_action *a = NULL;
        while (replystream_engine_poll_action(engine, &a) == REPLYSTREAM_OK) {
            if (a->kind == REPLYSTREAM_ACTION_SEND) {
                reasoning += a->lane == REPLYSTREAM_LANE_REASONING;
                answer += a->lane == REPLYSTREAM_LANE_ANSWER;
                CHECK_CODE(replystream_engine_push_delivered(engine, a->send_id, NULL, 0, now),
                           REPLYSTREAM_OK);
            }
        }
        uint64_t deadline = deadline_of(engine);
        if (deadline != REPLYSTREAM_NONE) {
            now = deadline > now ? deadline : now;
            CHECK_CODE(replystream_engine_push_timer(engine, now), REPLYSTREAM_OK);
        }
    }
    CHECK(reasoning == 1 && answer == 1);
    replystream_engine_free(engine);
}

static void require_final_tag(void) {
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_require_final_tag(opts, true), REPLYSTREAM_OK);
    drive_log log;
    run("generic", opts, "planning... <final>Only this.</final>", &log);
    CHECK(strcmp(log.text, "Only this.\n") == 0);
}

static void every_setter_accepts_its_values(void) {
    /* All knobs at once still make an engine (the values are checked together). */
    replystream_options *o = new_options();
    CHECK_CODE(replystream_options_set_text_limit(o, 3000), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_metric(o, REPLYSTREAM_METRIC_UTF16), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_preview_limit(o, 2000), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_max_lines(o, 40), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_chunk_min(o, 100), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_chunk_max(o, 900), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_break_preference(o, REPLYSTREAM_BREAK_SENTENCE),
               REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_chunk_mode(o, REPLYSTREAM_CHUNK_NEWLINE), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_break_mode(o, REPLYSTREAM_BREAK_MESSAGE_END),
               REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_block_streaming(o, true), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_coalesce_min(o, 200), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_coalesce_max(o, 1500), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_coalesce_idle_ms(o, 700), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_human_delay(o, REPLYSTREAM_HUMAN_DELAY_NATURAL, 0, 0),
               REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_delivery_timeout_ms(o, 9000), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_response_prefix(o, "{identityName}:", 15), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_prefix_every_message(o, true), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_model(o, "acme/m", 6), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_provider(o, "acme", 4), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_thinking_level(o, "low", 3), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_identity_name(o, "Ada", 3), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_reasoning(o, REPLYSTREAM_REASONING_STREAM), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_require_final_tag(o, false), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_silent_token(o, "SHH", 3), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_heartbeat_token(o, NULL, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_preview(o, REPLYSTREAM_PREVIEW_PARTIAL), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_preview_throttle_ms(o, 400), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_preview_cursor(o, NULL, 0), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_preview_min_initial_units(o, 10), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_preview_block_min(o, 50), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_preview_block_max(o, 300), REPLYSTREAM_OK);
    replystream_str s;
    CHECK_CODE(replystream_options_last_error(o, &s), REPLYSTREAM_OK);
    CHECK(s.len == 0);
    replystream_engine *engine = new_engine("telegram", o);
    /* The engine copied the options: freeing them does not affect it. */
    replystream_options_free(o);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "Hello.", 6, 0), REPLYSTREAM_OK);
    replystream_engine_free(engine);
}

int main(void) {
    response_prefix_with_model();
    silent_token_can_be_disabled();
    block_streaming_off_sends_finals();
    text_limit_and_max_lines();
    human_delay_spaces_blocks();
    reasoning_stream_uses_its_lane();
    require_final_tag();
    every_setter_accepts_its_values();
    printf("options: ok\n");
    return 0;
}
