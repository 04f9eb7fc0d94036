/* A whole turn through the C ABI on a synthetic clock: two assistant messages around a tool
 * call, text arriving in small deltas, every send acked, timers fired at their deadlines,
 * until IDLE. Checks order, completeness, determinism and the end-of-turn behaviour. */
#include <ctype.h>

#include "harness.h"

static const char FIRST[] =
    "Sure, let me look that up for you. The first thing to know is that the river "
    "crossing closes at dusk.\n\nThe second thing: bring a lamp, because the path along "
    "the cliff is unlit and the stones are slippery after rain.";
static const char TOOL_TEXT[] = "Searched the ferry timetable: 3 results";
static const char TOOL_MEDIA[] = "https://example.com/timetable.png";
static const char TOOL_MEDIA_2[] = "https://example.com/map.png";
static const char SECOND[] =
    "According to the timetable, the last ferry leaves at 18:40. "
    "If you miss it, the footbridge two kilometres upstream stays open all night.";

/* Pushes `text` in pieces of `step` bytes, `gap_ms` apart, draining after each. */
static void stream(replystream_engine *engine, drive_log *log, const char *text, size_t step,
                   uint64_t gap_ms) {
    size_t len = strlen(text);
    for (size_t at = 0; at < len; at += step) {
        size_t n = len - at < step ? len - at : step;
        log->now_ms += gap_ms;
        CHECK_CODE(replystream_engine_push_text_delta(engine, text + at, n, log->now_ms),
                   REPLYSTREAM_OK);
        drain(engine, log, 3);
    }
}

/* Copies `s` without whitespace into `out`. */
static void squeeze(const char *s, char *out, size_t cap) {
    size_t n = 0;
    for (; *s; s++) {
        if (!isspace((unsigned char)*s)) {
            CHECK(n + 1 < cap);
            out[n++] = *s;
        }
    }
    out[n] = '\0';
}

static void run_turn(drive_log *log) {
    replystream_options *opts = new_options();
    CHECK_CODE(replystream_options_set_chunk_min(opts, 40), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_chunk_max(opts, 120), REPLYSTREAM_OK);
    CHECK_CODE(replystream_options_set_coalesce_idle_ms(opts, 400), REPLYSTREAM_OK);
    replystream_engine *engine = new_engine("generic", opts);
    replystream_options_free(opts);

    memset(log, 0, sizeof *log);
    log->now_ms = 1000;
    CHECK_CODE(replystream_engine_push_message_start(engine, log->now_ms), REPLYSTREAM_OK);
    stream(engine, log, FIRST, 9, 20);

    /* A pause in the stream: fire whatever deadline is armed (the coalescer's idle timer). */
    uint64_t deadline = deadline_of(engine);
    if (deadline != REPLYSTREAM_NONE) {
        log->now_ms = deadline > log->now_ms ? deadline : log->now_ms;
        log->timers_fired++;
        CHECK_CODE(replystream_engine_push_timer(engine, log->now_ms), REPLYSTREAM_OK);
        drain(engine, log, 3);
    }

    CHECK_CODE(replystream_engine_push_text_end(engine, NULL, 0, log->now_ms), REPLYSTREAM_OK);
    /* The provider resends the full content at the end: it must not duplicate the text. */
    CHECK_CODE(replystream_engine_push_message_end(engine, FIRST, strlen(FIRST), log->now_ms),
               REPLYSTREAM_OK);
    drain(engine, log, 3);
    log->now_ms += 50;
    CHECK_CODE(replystream_engine_push_tool_start(engine, "search", 6, log->now_ms),
               REPLYSTREAM_OK);
    drain(engine, log, 3);
    const replystream_str media[] = {{TOOL_MEDIA, strlen(TOOL_MEDIA)},
                                     {TOOL_MEDIA_2, strlen(TOOL_MEDIA_2)}};
    CHECK_CODE(replystream_engine_push_tool_result(engine, TOOL_TEXT, strlen(TOOL_TEXT), media, 2,
                                                   log->now_ms),
               REPLYSTREAM_OK);
    drain(engine, log, 3);

    log->now_ms += 500;
    CHECK_CODE(replystream_engine_push_message_start(engine, log->now_ms), REPLYSTREAM_OK);
    stream(engine, log, SECOND, 5, 15);
    CHECK_CODE(replystream_engine_push_text_end(engine, NULL, 0, log->now_ms), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_message_end(engine, NULL, 0, log->now_ms),
               REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_push_finish(engine, log->now_ms), REPLYSTREAM_OK);
    run_until_idle(engine, log);

    CHECK(log->idles == 1);
    CHECK(replystream_engine_is_done(engine));
    CHECK(log->sends >= 2);
    CHECK(log->kinds[REPLYSTREAM_SEND_TOOL] == 1);

    /* After IDLE: nothing pending, model events refused, an old ack refused. */
    const replystream_action *a = NULL;
    CHECK_CODE(replystream_engine_poll_action(engine, &a), REPLYSTREAM_DONE);
    CHECK(a->kind == REPLYSTREAM_ACTION_NONE);
    CHECK_CODE(replystream_engine_push_text_delta(engine, "late", 4, log->now_ms),
               REPLYSTREAM_TURN_ENDED);
    check_detail(engine, "text_delta after the turn ended");
    CHECK_CODE(replystream_engine_push_delivered(engine, 1, NULL, 0, log->now_ms),
               REPLYSTREAM_UNKNOWN_SEND);
    CHECK_CODE(replystream_engine_push_timer(engine, log->now_ms + 100000), REPLYSTREAM_OK);
    CHECK_CODE(replystream_engine_poll_action(engine, &a), REPLYSTREAM_DONE);
    replystream_engine_free(engine);
}

/* Counts the occurrences of `needle` in `hay`. */
static unsigned count(const char *hay, const char *needle) {
    unsigned n = 0;
    for (const char *at = strstr(hay, needle); at; at = strstr(at + 1, needle)) {
        n++;
    }
    return n;
}

int main(void) {
    static drive_log first, second;
    run_turn(&first);

    /* Nothing lost, nothing duplicated (whitespace aside); the messages in order. */
    static char got[8192], first_text[1024], tool_text[256], second_text[1024];
    squeeze(first.text, got, sizeof got);
    squeeze(FIRST, first_text, sizeof first_text);
    squeeze(TOOL_TEXT, tool_text, sizeof tool_text);
    squeeze(SECOND, second_text, sizeof second_text);
    if (count(got, first_text) != 1 || count(got, tool_text) != 1 ||
        count(got, second_text) != 1 || strlen(got) != strlen(first_text) +
                                                           strlen(tool_text) +
                                                           strlen(second_text)) {
        fprintf(stderr, "sent text differs from the model text:\n--- sent\n%s\n", first.text);
        return 1;
    }
    /* In order: text before the tool call leaves before the tool's output. */
    CHECK(strstr(got, first_text) < strstr(got, tool_text));
    CHECK(strstr(got, tool_text) < strstr(got, second_text));
    CHECK(first.media == 2);

    /* Determinism: the same inputs, times and seed give the same sends. */
    run_turn(&second);
    CHECK(first.sends == second.sends);
    CHECK(first.now_ms == second.now_ms);
    CHECK(strcmp(first.text, second.text) == 0);

    printf("turn: %u sends (%u tool, %u block, %u final), %u timers armed, %u fired\n",
           first.sends, first.kinds[0], first.kinds[1], first.kinds[2], first.timers_armed,
           first.timers_fired);
    return 0;
}
