/* Small helpers shared by the C tests: CHECK macros and a loop that drives an engine on a
 * synthetic clock, acking every send, until it goes idle. */
#ifndef REPLYSTREAM_TEST_HARNESS_H
#define REPLYSTREAM_TEST_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replystream.h"

#if defined(__GNUC__)
#define HARNESS_UNUSED __attribute__((unused))
#else
#define HARNESS_UNUSED
#endif

#define CHECK(cond)                                                                 \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                                \
        }                                                                           \
    } while (0)

#define CHECK_CODE(expr, want)                                                          \
    do {                                                                                \
        replystream_result got_ = (expr);                                               \
        if (got_ != (want)) {                                                           \
            fprintf(stderr, "%s:%d: %s returned %u (%s), expected %u (%s)\n", __FILE__, \
                    __LINE__, #expr, (unsigned)got_, replystream_result_str(got_),      \
                    (unsigned)(want), replystream_result_str(want));                    \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

/* What a drive loop saw. */
typedef struct {
    char text[8192]; /* every sent text, each followed by '\n' */
    size_t text_len;
    unsigned sends, media, timers_armed, timers_fired, idles, aborts;
    unsigned kinds[3]; /* sends per replystream_send_kind */
    uint64_t now_ms;
} drive_log;

HARNESS_UNUSED static void log_send(drive_log *log, const replystream_action *a) {
    CHECK(a->text.ptr != NULL);
    CHECK(a->text.ptr[a->text.len] == '\0');
    CHECK(log->text_len + a->text.len + 1 < sizeof log->text);
    memcpy(log->text + log->text_len, a->text.ptr, a->text.len);
    log->text_len += a->text.len;
    log->text[log->text_len++] = '\n';
    log->text[log->text_len] = '\0';
    log->sends++;
    CHECK(a->send_kind <= REPLYSTREAM_SEND_FINAL);
    log->kinds[a->send_kind]++;
}

/* Polls every pending action; acks each SEND `ack_delay_ms` later with a message ref. */
HARNESS_UNUSED static void drain(replystream_engine *engine, drive_log *log, uint64_t ack_delay_ms) {
    for (;;) {
        replystream_action a;
        replystream_result r = replystream_engine_poll_action(engine, &a);
        if (r == REPLYSTREAM_DONE) {
            CHECK(a.kind == REPLYSTREAM_ACTION_NONE);
            return;
        }
        CHECK_CODE(r, REPLYSTREAM_OK);
        switch (a.kind) {
        case REPLYSTREAM_ACTION_SEND: {
            log_send(log, &a);
            log->media += (unsigned)a.media_count;
            for (size_t i = 0; i < a.media_count; i++) {
                replystream_str m;
                CHECK_CODE(replystream_action_media(engine, i, &m), REPLYSTREAM_OK);
                CHECK(m.len > 0);
            }
            replystream_str m;
            CHECK_CODE(replystream_action_media(engine, a.media_count, &m),
                       REPLYSTREAM_OUT_OF_RANGE);
            log->now_ms += ack_delay_ms;
            char ref[32];
            int n = snprintf(ref, sizeof ref, "msg-%llu", (unsigned long long)a.send_id);
            CHECK_CODE(replystream_engine_push_delivered(engine, a.send_id, ref, (size_t)n,
                                                         log->now_ms),
                       REPLYSTREAM_OK);
            break;
        }
        case REPLYSTREAM_ACTION_ARM_TIMER:
            log->timers_armed++;
            break;
        case REPLYSTREAM_ACTION_IDLE:
            log->idles++;
            break;
        case REPLYSTREAM_ACTION_ABORT:
            log->aborts++;
            break;
        default:
            CHECK(!"unknown action kind");
        }
    }
}

/* Drains, then jumps the clock to each deadline and fires it, until IDLE (or nothing is
 * left to wait for). Bounded, so a stuck engine fails instead of hanging. */
HARNESS_UNUSED static void run_until_idle(replystream_engine *engine, drive_log *log) {
    for (int step = 0; step < 10000; step++) {
        drain(engine, log, 7);
        if (log->idles > 0) {
            return;
        }
        uint64_t deadline = replystream_engine_next_deadline(engine);
        if (deadline == REPLYSTREAM_NONE) {
            return;
        }
        if (deadline > log->now_ms) {
            log->now_ms = deadline;
        }
        log->timers_fired++;
        CHECK_CODE(replystream_engine_push_timer(engine, log->now_ms), REPLYSTREAM_OK);
    }
    CHECK(!"engine did not settle");
}

HARNESS_UNUSED static replystream_engine *new_engine(const char *channel, const replystream_options *opts) {
    replystream_engine *engine = NULL;
    CHECK_CODE(replystream_engine_new(channel, strlen(channel), opts, 42, &engine),
               REPLYSTREAM_OK);
    CHECK(engine != NULL);
    return engine;
}

#endif
